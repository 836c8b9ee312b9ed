"""Masking on the way out costs the same for a long list as for a short one: one redactor per
answer, and a viewer's letter previews made from heads fetched with the page (no query per row
or per field)."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from console.services.redaction import do_set_redaction_rule
from tests.access.masked_value import CARD, CARD_RULE, leaks
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


def _queries(client, url: str) -> int:
    with CaptureQueriesContext(connection) as captured:
        response = client.get(url)
    assert response.status_code == 200 and leaks(response.content) == []
    return len(captured)


@pytest.mark.parametrize("url", ["/api/letters/?place={place}", "/places/{place}/", "/api/audit/", "/audit/"])
def test_a_viewers_list_costs_no_query_per_row(url, memory_broker, people, signed_in_as):
    do_set_redaction_rule(actor="tests", kind=CARD_RULE[0], pattern=CARD_RULE[1])
    place = memory_place(memory_broker)
    viewer = signed_in_as(people["viewer"])
    store_letter(place, f"paid with {CARD}".encode(), exception_message=f"card {CARD}")
    few = _queries(viewer, url.format(place=place.pk))
    for n in range(20):
        store_letter(place, f"order {n} paid with {CARD}".encode(), exception_message=f"card {CARD}")
    assert _queries(viewer, url.format(place=place.pk)) == few
