"""Issue 29, "what to build" 3 and 4, on the real RabbitMQ: an operator limited to place A cannot
make his rule publish outside what he may. His draft rule over A forwarding into a parking queue
the broker does not dead-letter into A: its dry run lists the refusal (target refused, naming
the queue), and enabling it answers 400 with the reason; nothing is enabled or moved. His rule
forwarding into A's own work queue, which the broker's topology says dead-letters into A, is
enabled and would run."""

from __future__ import annotations

import pytest
from django.test import Client
from rest_framework.test import APIClient

from console.access.roles import OPERATOR, set_role
from console.jobs.automation.rules_at_work import apply_rules
from console.models import AuditEvent, Job, RoleScope, Rule

pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db]


def test_his_rule_into_a_queue_he_may_not_publish_to_is_refused_on_enable(kit, captured, django_user_model):
    work, place, _ = captured("payments", [(b'{"payment": 1}', {"tenant": "acme"})])
    parked = kit.queue(kit.name("payments.parked"))
    otto = django_user_model.objects.create_user("otto")
    set_role(otto, OPERATOR)
    RoleScope.objects.create(user=otto, place=place)
    api = APIClient()
    api.force_authenticate(otto)

    def draft(name, target):
        made = api.post("/api/rules/", {"name": name, "scope": {"place": place.pk},
                                        "action": {"kind": "forward", "target": target}}, format="json")
        assert made.status_code == 201, made.content
        return made.json()["id"]

    outside = draft("park payments", parked)
    dry = api.post(f"/api/rules/{outside}/dry-run/").json()
    assert (dry["matched"], dry["by_action"], dry["would_run"]) == (1, {"forward": 1}, {"forward": 0})
    (refused,) = dry["refused"]
    assert (refused["action"], refused["code"], refused["count"]) == ("forward", "target_refused", 1)
    assert parked in refused["reason"] and "outside what you may act on" in refused["reason"]
    page = Client()
    page.force_login(otto)
    shown = page.post(f"/rules/{outside}/dry-run/", HTTP_HX_REQUEST="true").content.decode()
    assert "0 would run" in shown and "to forward:" in shown and parked in shown, shown

    answer = api.patch(f"/api/rules/{outside}/", {"enabled": True, "reason": "park them"}, format="json")
    assert answer.status_code == 400, answer.content
    assert "would be refused" in answer.json()["detail"] and parked in answer.json()["detail"]
    assert Rule.objects.get(pk=outside).enabled is False
    assert not AuditEvent.objects.filter(action="rule.enabled").exists()
    apply_rules()
    assert not Job.objects.filter(kind="move").exists() and kit.depth(parked) == 0

    inside = draft("back to work", work)
    assert api.post(f"/api/rules/{inside}/dry-run/").json()["would_run"] == {"forward": 1}
    enabled = api.patch(f"/api/rules/{inside}/", {"enabled": True, "reason": "its consumer is fixed"}, format="json")
    assert enabled.status_code == 200, enabled.content
    assert AuditEvent.objects.get(action="rule.enabled").details["dry_run"]["would_run"] == {"forward": 1}
