"""The API's safety net (issue 28, "what to build" 1): an answer, or the part of one, that no
masked serializer made (a dry run's dict, an error body that quotes a value, a list built by
hand) is masked whole for a viewer by the renderer; what a masked serializer made is left as
it masked it, and an operator reads everything as it is."""

from __future__ import annotations

import json

import pytest
from django.test import RequestFactory
from rest_framework import serializers

from console.access.masking import MaskedSerializer, MaskingJSONRenderer, Plain
from console.services.redaction import do_set_redaction_rule
from tests.access.masked_value import CARD, CARD_RULE

pytestmark = pytest.mark.django_db


class Answer(MaskedSerializer):
    safe_fields = ("code",)
    code = serializers.CharField()


def _rendered(user, data) -> dict:
    request = RequestFactory().get("/api/anything/")
    request.user = user
    return json.loads(MaskingJSONRenderer().render(data, renderer_context={"request": request}))


@pytest.fixture(autouse=True)
def card_rule():
    do_set_redaction_rule(actor="tests", kind=CARD_RULE[0], pattern=CARD_RULE[1])


def test_a_plain_answer_is_masked_whole_for_a_viewer(people):
    data = {"detail": f"no rule named 'card {CARD}'", "rows": [{"name": CARD, "count": 2}], "n": int(CARD),
            "ok": True, "next": Plain(f"/api/letters/?q={CARD}")}
    assert _rendered(people["viewer"], data) == {
        "detail": "no rule named 'card ***'", "rows": [{"name": "***", "count": 2}], "n": "***", "ok": True,
        "next": f"/api/letters/?q={CARD}"}  # a link repeating the reader's own query is declared plain


def test_what_a_masked_serializer_made_is_left_as_it_masked_it(people):
    made = Answer({"code": CARD}).data  # a field declared safe: left alone by the renderer too
    assert _rendered(people["viewer"], {"results": made}) == {"results": {"code": CARD}}


def test_an_operator_reads_a_plain_answer_as_it_is(people):
    assert _rendered(people["operator"], {"detail": f"card {CARD}"}) == {"detail": f"card {CARD}"}
