"""Issue 29, finding 2, on the real RabbitMQ: an unlimited admin's rule scoped to one dead place,
matching a header, forwarding into a parking queue (not a dead place, nothing dead-letters from
it into the place). Its dry run says it would run, enabling it succeeds, a round forwards the
letter, and the parking queue receives it. Before, the rule's scope also narrowed where it
might publish to that place: every round failed ("outside what you may act on") while its dry
run had said it would forward. A rule's scope chooses its letters; where it publishes is its
enabler's right (invariant 10)."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from console.jobs.automation.rules_at_work import apply_rules
from console.jobs.door.runner import run_job
from console.models import DeadLetter, Job, Rule

pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db]


def test_an_admins_rule_scoped_to_a_place_forwards_into_a_parking_queue(kit, captured, admin):
    _, place, (acme, other) = captured("orders", [(b'{"order": 1}', {"tenant": "acme"}),
                                                  (b'{"order": 2}', {"tenant": "other"})])
    parked = kit.queue(kit.name("orders.parked"))
    api = APIClient()
    api.force_authenticate(admin)
    made = api.post("/api/rules/", {
        "name": "park acme", "scope": {"place": place.pk}, "match": {"header": {"name": "tenant", "value": "acme"}},
        "action": {"kind": "forward", "target": parked}, "reason": "acme's orders wait in the parking queue"},
        format="json")
    assert made.status_code == 201, made.content
    rule_id = made.json()["id"]

    dry = api.post(f"/api/rules/{rule_id}/dry-run/").json()
    assert dry == {"matched": 1, "by_action": {"forward": 1}, "would_run": {"forward": 1}, "refused": [],
                   "sample": [acme.pk]}
    enabled = api.patch(f"/api/rules/{rule_id}/", {"enabled": True, "reason": "dry run looks right"}, format="json")
    assert enabled.status_code == 200 and enabled.json()["enabled"] is True, enabled.content

    apply_rules()
    assert Rule.objects.get(pk=rule_id).last_error == ""
    (job,) = Job.objects.filter(actor_name="rule:park acme@v1")
    assert (job.kind, job.params["target"], job.selection["ids"]) == ("move", parked, [acme.pk])
    assert run_job(job.pk) == "succeeded"
    assert [message.body for message in kit.drain(parked)] == [b'{"order": 1}']
    assert DeadLetter.objects.get(pk=acme.pk).state == "replayed"
    assert DeadLetter.objects.get(pk=other.pk).state == "held"
