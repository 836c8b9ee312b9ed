"""Issue 46 for a viewer, who sees masked content: the words of the filters (a part in any case,
or "exactly") find letters by what the viewer reads, and a word that only the masked part holds
finds nothing (no oracle)."""

from __future__ import annotations

import pytest

from console.services.redaction import do_set_redaction_rule
from console.services.selection import visible_matches
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


@pytest.fixture
def letter(memory_broker):
    do_set_redaction_rule(actor="tests", kind="regex", pattern=r"acct-\d+")
    return store_letter(memory_place(memory_broker), b"{}", exception_type="com.shop.PaymentDeclined acct-42",
                        headers={"tenant": "AcmeCorp acct-42"})


@pytest.mark.parametrize(("query", "found"), [
    ({"exception": "paymentdeclined"}, True),
    ({"exception": "acct-42"}, False),  # masked for the viewer
    ({"header": "tenant", "header_value": "acme"}, True),
    ({"header": "tenant", "header_value": "acct-4"}, False),
    ({"header": "tenant", "header_value": '"AcmeCorp acct-42"'}, False),  # exactly: the viewer reads a mask
])
def test_a_viewer_finds_by_a_part_of_what_they_read(letter, people, query, found):
    assert list(visible_matches(people["viewer"], query).letters) == ([letter] if found else [])
    assert list(visible_matches(people["operator"], query).letters) == [letter]
