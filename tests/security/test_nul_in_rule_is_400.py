"""Finding 14 of issue 28: a NUL in a rule's match or forward target was a 500 on
``POST /api/rules/`` (the rule's jsonb columns refuse it). It is a 400 now, from the API's JSON
parser, the pages' door, and the rules service itself; nothing is saved or audited."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from console.models import AuditEvent, Rule
from console.services.rules import RuleError, do_create_rule

pytestmark = [pytest.mark.django_db, pytest.mark.role("admin")]

RULES_WITH_NUL = [
    {"match": {"origin": "orders\x00"}, "action": {"kind": "hold"}},
    {"match": {"reason": "rejected\x00"}, "action": {"kind": "hold"}},
    {"match": {"exception_type": "Value\x00Error"}, "action": {"kind": "hold"}},
    {"match": {"header": {"name": "x\x00", "value": "1"}}, "action": {"kind": "hold"}},
    {"match": {"body_path": {"path": "$.a", "value": "x\x00y"}}, "action": {"kind": "hold"}},
    {"match": {"body_path": {"path": "$.a", "value": {"k\x00": 1}}}, "action": {"kind": "hold"}},
    {"match": {}, "action": {"kind": "forward", "target": "parking\x00lot"}},
]


@pytest.fixture
def api(operator) -> APIClient:
    client = APIClient()
    client.force_authenticate(operator)
    return client


def _nothing_saved() -> None:
    assert not Rule.objects.exists()
    assert not AuditEvent.objects.filter(action__startswith="rule.").exists()


@pytest.mark.parametrize("rule", RULES_WITH_NUL)
def test_the_api_refuses_a_rule_with_nul(api, rule):
    answer = api.post("/api/rules/", {"name": "n", **rule}, format="json")
    assert answer.status_code == 400, answer.content
    assert "NUL" in answer.json()["detail"]
    _nothing_saved()


@pytest.mark.parametrize("rule", RULES_WITH_NUL)
def test_the_rules_service_refuses_a_rule_with_nul(rule):
    with pytest.raises(RuleError, match="NUL|path like"):
        do_create_rule(actor="tests", name="n", **rule)
    _nothing_saved()


def test_the_rules_page_refuses_a_rule_with_nul(client, operator):
    client.force_login(operator)
    answer = client.post("/rules/", {"name": "n", "kind": "forward", "target": "parking\x00lot", "reason": "r"})
    assert answer.status_code == 400 and "NUL" in answer.content.decode()
    _nothing_saved()
