"""Rules mask a value whatever type it was kept as (issue 16, finding 4): a header value kept as
bytes (``{"$bytes": ...}``), a number or a decimal, a table nested in a header, JSON written
inside a header string; a JSON body is masked after decoding, so ``\\u0034\\u0031...`` is
masked as the digits it decodes to; and audit details get every kind of rule, JSON paths
included, so an edit's body diff does not show the field a path masks."""

from __future__ import annotations

import base64
import json
from decimal import Decimal

import pytest

from console.jobs.door.requests import request_job
from console.models import AuditEvent, RedactionRule
from console.services.redaction import do_set_redaction_rule
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db

CARD = "4111111111111111"
NUMBER = "5500000000000004"  # masked by the JSON path $.card.number only
BODY = json.dumps({"card": {"number": NUMBER, "brand": "visa"}, "note": "paid"}, indent=2).encode()
# Decodes to the card number; as written, no 4111 followed by twelve digits appears.
ESCAPED = b'{"note": "paid with \\u0034\\u0031\\u0031\\u0031111111111111", "order": 7}'
HEADERS = {
    "x-bytes": f"card {CARD}".encode(), "x-binary": b"\xff\x00" + CARD.encode(), "x-number": int(CARD),
    "x-decimal": Decimal(CARD), "x-table": {"cards": [{"pan": CARD}]},
    "x-json": json.dumps({"card": {"number": NUMBER}}), "x-plain": "kept",
}
LEAKS = (CARD, NUMBER, base64.b64encode(f"card {CARD}".encode()).decode(), "\\u0034\\u0031", "\\\\u0034\\\\u0031")


@pytest.fixture
def letters(memory_broker):
    for kind, pattern in (("regex", r"4111\d{12}"), ("json_path", "$.card.number")):
        do_set_redaction_rule(actor="tests", kind=kind, pattern=pattern)
    place = memory_place(memory_broker)
    return store_letter(place, BODY, headers=HEADERS), store_letter(place, ESCAPED)


def _leaks(text: str) -> list[str]:
    return [leak for leak in LEAKS if leak in text]


def test_headers_of_every_type_are_masked_in_the_api(letters, people, signed_in_as):
    letter, _ = letters
    headers = signed_in_as(people["viewer"]).get(f"/api/letters/{letter.pk}/").json()["headers"]
    assert base64.b64decode(headers["x-bytes"]["$bytes"]) == b"card ***"
    assert base64.b64decode(headers["x-binary"]["$bytes"]) == b"\xff\x00***"
    assert headers["x-number"] == "***" and headers["x-decimal"] == {"$decimal": "***"}
    assert headers["x-table"] == {"cards": [{"pan": "***"}]}
    assert json.loads(headers["x-json"]) == {"card": {"number": "***"}} and headers["x-plain"] == "kept"
    assert _leaks(json.dumps(headers)) == []
    seen = signed_in_as(people["operator"]).get(f"/api/letters/{letter.pk}/").json()["headers"]
    assert seen["x-number"] == int(CARD)


def test_headers_of_every_type_are_masked_on_the_letter_page(letters, people, signed_in_as):
    letter, _ = letters
    page = signed_in_as(people["viewer"]).get(f"/letters/{letter.pk}/").content.decode()
    assert _leaks(page) == [] and "card ***" in page and "kept" in page


def test_an_escaped_json_body_is_masked_after_decoding(letters, people, signed_in_as):
    _, escaped = letters
    RedactionRule.objects.filter(kind="json_path").delete()  # the regular expression alone masks it
    viewer = signed_in_as(people["viewer"])
    body = viewer.get(f"/api/letters/{escaped.pk}/").json()["body"]["text"]
    assert json.loads(body) == {"note": "paid with ***", "order": 7}
    page = viewer.get(f"/letters/{escaped.pk}/").content.decode()
    assert "paid with ***" in page and _leaks(page) == []
    listed = viewer.get("/api/letters/", {"place": escaped.place_id}).content.decode()
    assert CARD not in listed and CARD not in viewer.get(f"/places/{escaped.place_id}/").content.decode()


def test_an_edits_body_diff_gets_the_json_path_rules(letters, people, signed_in_as):
    letter, _ = letters
    edited = BODY.replace(b'"visa"', b'"mastercard"')
    request_job("edit_replay", letter=letter, body=edited, headers=letter.headers, actor=people["operator"],
                reason="brand")
    diff = AuditEvent.objects.get(action="edit_replay").details["body"]["diff"]
    assert NUMBER in diff  # kept whole in the audit, for who may see it
    viewer = signed_in_as(people["viewer"])
    for url in ("/audit/", "/api/audit/", f"/letters/{letter.pk}/", f"/api/letters/{letter.pk}/"):
        text = viewer.get(url).content.decode()
        assert _leaks(text) == [] and "mastercard" in text, url
    shown = viewer.get("/api/audit/", {"action": "edit_replay"}).json()["results"][0]["details"]["body"]["diff"]
    assert '"number": "***"' in shown
    for export in ("/audit/export.csv", "/audit/export.json"):
        assert _leaks(b"".join(signed_in_as(people["admin"]).get(export).streaming_content).decode()) == []
