"""Issue 28, finding 1: a handling rule's match is text a person typed, as hostile and as
maskable as what messages carry. A viewer reads a rule matching ``card 4111...`` masked on
``GET /api/rules/``, ``GET /api/rules/{id}/`` and the Rules page (as the rule's audit row
already was); an operator reads it as it is."""

from __future__ import annotations

import pytest

from console.services.redaction import do_set_redaction_rule
from console.services.rules import do_create_rule
from tests.access.masked_value import CARD, CARD_RULE, leaks

pytestmark = pytest.mark.django_db


@pytest.fixture
def rule(people):
    do_set_redaction_rule(actor="tests", kind=CARD_RULE[0], pattern=CARD_RULE[1])
    return do_create_rule(actor=people["operator"], name="declined cards", action={"kind": "hold"},
                          match={"exception_message": f"card {CARD}"})


def _answers(client, rule) -> dict[str, bytes]:
    return {url: client.get(url).content for url in ("/api/rules/", f"/api/rules/{rule.pk}/", "/rules/")}


def test_a_viewer_reads_a_rules_match_masked(rule, people, signed_in_as):
    answers = _answers(signed_in_as(people["viewer"]), rule)
    assert {url: leaks(answer) for url, answer in answers.items()} == {url: [] for url in answers}
    listed = signed_in_as(people["viewer"]).get("/api/rules/").json()
    assert listed[0]["match"] == {"exception_message": "card ***"}
    assert b"declined cards" in answers["/rules/"]


def test_an_operator_reads_the_match_as_typed(rule, people, signed_in_as):
    answers = _answers(signed_in_as(people["operator"]), rule)
    assert all(CARD.encode() in answer for answer in answers.values())
