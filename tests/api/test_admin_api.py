"""The admin pages' API, with the pages' checks and audit: redaction rules (an admin adds,
changes and deletes one; an operator may not), roles and scopes (an admin limits a user to a
place and lifts it), and API tokens (each user makes and revokes their own; the key is shown
once, never listed)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from console.models import AuditEvent, RoleScope
from tests.web.factory import memory_place

pytestmark = pytest.mark.django_db


def _as(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_redaction_rules_through_the_api(admin, operator):
    refused = _as(operator).post("/api/redaction-rules/", {"kind": "regex", "pattern": "x"}, format="json")
    assert refused.status_code == 403
    made = _as(admin).post("/api/redaction-rules/", {"kind": "regex", "pattern": r"\d{16}", "note": "cards"},
                           format="json")
    assert made.status_code == 201, made.content
    bad = _as(admin).post("/api/redaction-rules/", {"kind": "regex", "pattern": "("}, format="json")
    assert bad.status_code == 400
    changed = _as(admin).put(f"/api/redaction-rules/{made.json()['id']}/", {"kind": "regex", "pattern": r"\d{15,16}",
                                                                            "enabled": False}, format="json")
    assert changed.status_code == 200 and changed.json()["enabled"] is False
    assert _as(admin).delete(f"/api/redaction-rules/{made.json()['id']}/").status_code == 204
    assert _as(admin).get("/api/redaction-rules/").json() == []
    assert [e.action for e in AuditEvent.objects.order_by("id")] == [
        "redaction_rule_set", "redaction_rule_set", "redaction_rule_deleted"]


def test_roles_and_limits_through_the_api(admin, operator, memory_broker):
    place = memory_place(memory_broker)
    api = _as(admin)
    assert _as(operator).get("/api/roles/").status_code == 403
    limited = api.post("/api/roles/", {"user": "olga", "role": "viewer", "places": [place.pk], "reason": "temp"},
                       format="json")
    assert limited.status_code == 200, limited.content
    assert limited.json()["role"] == "viewer" and len(limited.json()["limits"]) == 1
    assert RoleScope.objects.filter(user=operator, place=place).exists()
    lifted = api.post("/api/roles/", {"user": "olga", "clear_limits": True}, format="json").json()
    assert lifted["limits"] == [] and lifted["role"] == "viewer"
    assert api.post("/api/roles/", {"user": "nobody", "role": "viewer"}, format="json").status_code == 400
    assert {(e.action, e.target) for e in AuditEvent.objects.all()} >= {("grant_role", "olga"), ("grant_scope", "olga")}


def test_tokens_through_the_api(operator):
    api = _as(operator)
    made = api.post("/api/tokens/")
    assert made.status_code == 201
    key = made.json()["key"]
    listed = api.get("/api/tokens/").json()
    assert listed == [{"id": key[:4], "user": "olga", "created": listed[0]["created"], "mcp_act": False}]
    assert key not in str(listed)
    assert APIClient(HTTP_AUTHORIZATION=f"Token {key}").get("/api/letters/").status_code == 200
    assert api.delete(f"/api/tokens/?key_starts={key[:4]}&reason=rotated").status_code == 204
    assert APIClient(HTTP_AUTHORIZATION=f"Token {key}").get("/api/letters/").status_code in (401, 403)
    assert [e.action for e in AuditEvent.objects.order_by("id")] == ["token.created", "token.revoked"]

    # A token agents may act with (MCP's mcp:act), said so when it is made and audited.
    acting = api.post("/api/tokens/", {"mcp_act": True}, format="json")
    assert acting.status_code == 201 and api.get("/api/tokens/").json()[0]["mcp_act"] is True
    assert AuditEvent.objects.filter(action="token.created").order_by("-id")[0].details["mcp_act"] is True
