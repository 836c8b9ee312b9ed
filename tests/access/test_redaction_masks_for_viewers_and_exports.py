"""Redaction rules mask bodies and headers for viewers (letter page, place previews, API) and
in exports for everyone; operators and admins see letters as they are; binary bodies are
hidden from viewers; changing the rules is audited and refused to non-admins."""

from __future__ import annotations

import csv
import io
import json

import pytest

from console.jobs.door.requests import request_job
from console.models import AuditEvent, RedactionRule
from console.services.redaction import do_set_redaction_rule
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db

CARD = "4111 1111 1111 1111"
EMAIL = "eve@example.com"
TOKEN = "Bearer tok-7f3a9c"
BODY = json.dumps({"card": {"number": "4000-0000-0000-0002", "brand": "visa"}, "customer": {"email": EMAIL},
                   "note": f"call about {CARD}"}).encode()
SECRETS = ("4000-0000-0000-0002", EMAIL, CARD, TOKEN)


@pytest.fixture
def rules():
    for kind, pattern in (("json_path", "$.card.number"), ("json_path", "$..email"), ("header", "authorization"),
                          ("regex", r"\b(?:\d[ -]*?){13,19}\b")):
        do_set_redaction_rule(actor="tests", kind=kind, pattern=pattern)


@pytest.fixture
def letter(memory_broker, rules):
    place = memory_place(memory_broker)
    return store_letter(place, BODY, headers={"Authorization": TOKEN, "x-note": f"card {CARD}", "x-plain": "kept"})


@pytest.fixture
def binary(letter):
    return store_letter(letter.place, b"\x00\xff\xfe" + CARD.encode())


def _text(response) -> str:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content).decode()
    return response.content.decode()


def test_a_viewer_sees_the_letter_masked_and_an_operator_unmasked(letter, people, signed_in_as):
    page = _text(signed_in_as(people["viewer"]).get(f"/letters/{letter.pk}/"))
    assert not [s for s in SECRETS if s in page]
    assert "&quot;brand&quot;: &quot;visa&quot;" in page and "***" in page and "kept" in page
    assert 'id="masked-note"' in page and "Download body" not in page and "Edit and replay" not in page
    page = _text(signed_in_as(people["operator"]).get(f"/letters/{letter.pk}/"))
    assert all(s in page.replace("&quot;", '"') for s in (EMAIL, CARD, TOKEN)) and 'id="masked-note"' not in page


def test_a_binary_body_is_hidden_from_a_viewer_and_the_page_still_renders(binary, people, signed_in_as):
    page = _text(signed_in_as(people["viewer"]).get(f"/letters/{binary.pk}/"))
    assert 'id="body-hidden"' in page and "4111" not in page
    assert 'id="body-hidden"' not in _text(signed_in_as(people["operator"]).get(f"/letters/{binary.pk}/"))


def test_place_previews_are_masked_for_a_viewer(letter, binary, people, signed_in_as):
    page = _text(signed_in_as(people["viewer"]).get(f"/places/{letter.place_id}/"))
    assert not [s for s in SECRETS if s in page] and "4111" not in page
    assert "&quot;brand&quot;: &quot;visa&quot;" in page
    assert "4000-0000-0000-0002" in _text(signed_in_as(people["operator"]).get(f"/places/{letter.place_id}/"))


def test_the_api_masks_list_and_detail_for_a_viewer(letter, binary, people, signed_in_as):
    viewer = signed_in_as(people["viewer"])
    listed = _text(viewer.get("/api/letters/", {"place": letter.place_id}))
    detail = viewer.get(f"/api/letters/{letter.pk}/").json()
    assert not [s for s in SECRETS if s in listed + json.dumps(detail)]
    assert json.loads(detail["body"]["text"])["card"] == {"number": "***", "brand": "visa"}
    assert detail["headers"]["Authorization"] == "***" and detail["headers"]["x-plain"] == "kept"
    assert viewer.get(f"/api/letters/{binary.pk}/").json()["body"] == {"encoding": "hidden"}
    seen = signed_in_as(people["operator"]).get(f"/api/letters/{letter.pk}/").json()
    assert seen["headers"]["Authorization"] == TOKEN and EMAIL in seen["body"]["text"]


def test_audit_details_are_masked_for_a_viewer_and_in_every_export(letter, people, signed_in_as):
    request_job("edit_replay", letter=letter, body=BODY, headers={**letter.headers, "x-added": f"card {CARD}"},
                       actor=people["operator"], reason="fix the card")
    assert CARD in json.dumps(AuditEvent.objects.get(action="edit_replay").details)
    assert CARD not in _text(signed_in_as(people["viewer"]).get("/audit/"))
    assert CARD in _text(signed_in_as(people["operator"]).get("/audit/"))
    assert CARD not in _text(signed_in_as(people["viewer"]).get("/api/audit/"))
    for role in ("operator", "admin"):
        client = signed_in_as(people[role])
        exported_csv = _text(client.get("/audit/export.csv"))
        exported_json = _text(client.get("/audit/export.json"))
        assert CARD not in exported_csv and CARD not in exported_json
        rows = list(csv.DictReader(io.StringIO(exported_csv)))
        assert any(row["action"] == "edit_replay" and "card ***" in row["details"] for row in rows)


def test_rules_are_changed_on_the_admins_page_and_audited(people, signed_in_as):
    assert signed_in_as(people["operator"]).post("/redaction/", {"kind": "header", "pattern": "x-*"}).status_code == 403
    admin = signed_in_as(people["admin"])
    refused = admin.post("/redaction/", {"kind": "regex", "pattern": "(unclosed"})
    assert refused.status_code == 400 and "not a regular expression" in refused.content.decode()
    assert admin.post("/redaction/", {"kind": "header", "pattern": "x-*", "enabled": "on"}).status_code == 302
    rule = RedactionRule.objects.get()
    assert admin.post("/redaction/", {"rule": rule.pk, "kind": "header", "pattern": "x-*"}).status_code == 302
    rule.refresh_from_db()
    assert rule.enabled is False
    assert admin.post(f"/redaction/{rule.pk}/delete/").status_code == 302
    assert not RedactionRule.objects.exists()
    events = list(AuditEvent.objects.filter(action__startswith="redaction_rule").order_by("id"))
    assert [(e.action, e.actor_name) for e in events] == [
        ("redaction_rule_set", "ada"), ("redaction_rule_set", "ada"), ("redaction_rule_deleted", "ada")]
    assert events[1].details["before"]["enabled"] is True and events[1].details["after"]["enabled"] is False
