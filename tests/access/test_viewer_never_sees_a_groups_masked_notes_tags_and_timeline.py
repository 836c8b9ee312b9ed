"""Issue 28, finding 2: what people write about a failure group (its tags, its notes, and the
timeline that records both) is masked for a viewer like the group's exception already was:
``GET /api/groups/{fp}/``, the groups list (API and page) and the group's page never show the
card number a redaction rule masks; an operator reads them as written."""

from __future__ import annotations

import pytest

from console.services.group_work import do_add_note, do_update_group
from console.services.redaction import do_set_redaction_rule
from tests.access.masked_value import CARD, CARD_RULE, leaks
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


@pytest.fixture
def group(memory_broker, people):
    do_set_redaction_rule(actor="tests", kind=CARD_RULE[0], pattern=CARD_RULE[1])
    letter = store_letter(memory_place(memory_broker), b"order 7", exception_type="com.shop.Declined",
                          exception_message="payment declined")
    fingerprint = letter.fingerprint
    do_update_group(fingerprint, actor=people["operator"], tags=[f"card-{CARD}"], status="investigating")
    do_add_note(fingerprint, actor=people["operator"], text=f"customer says card {CARD} is fine")
    return fingerprint


def _urls(fingerprint: str) -> list[str]:
    return [f"/api/groups/{fingerprint}/", "/api/groups/?state=any", f"/groups/{fingerprint}/", "/groups/?state=any"]


def test_a_viewer_reads_tags_notes_and_timeline_masked(group, people, signed_in_as):
    viewer = signed_in_as(people["viewer"])
    answers = {url: viewer.get(url) for url in _urls(group)}
    assert {url: answer.status_code for url, answer in answers.items()} == {url: 200 for url in answers}
    assert {url: leaks(answer.content) for url, answer in answers.items()} == {url: [] for url in answers}
    detail = answers[f"/api/groups/{group}/"].json()
    assert detail["tags"] == ["card-***"]
    assert [note["text"] for note in detail["notes"]] == ["customer says card *** is fine"]
    noted = [event for event in detail["timeline"] if event["action"] == "group.note"]
    assert noted and noted[0]["details"]["text"] == "customer says card *** is fine"
    assert b"customer says card *** is fine" in answers[f"/groups/{group}/"].content


def test_an_operator_reads_them_as_written(group, people, signed_in_as):
    operator = signed_in_as(people["operator"])
    for url in _urls(group):
        assert CARD.encode() in operator.get(url).content, url
