"""A draft rule's dry run, through the API, counts the held letters it would act on, per
action, among those an earlier enabled rule does not take first; enabling it records those
numbers in the audit; and the rule then acts on exactly those letters, through jobs asked for
by ``rule:<name>@v<n>``."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from console.jobs.automation.rules_at_work import apply_rules
from console.jobs.door.runner import run_job
from console.models import AuditEvent, DeadLetter, Job, LetterHandling
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


def _letters(place):
    acme = [store_letter(place, json.dumps({"order": {"status": "paid", "n": n}}).encode(), headers={"tenant": "acme"},
                         exception_type="TimeoutError") for n in range(4)]
    currency = [store_letter(place, b'{"amount": 3}', exception_type="ValueError",
                             exception_message=f"bad currency EU{n}") for n in range(3)]
    refunded = [store_letter(place, json.dumps({"order": {"status": "refunded"}}).encode(), exception_type="KeyError")
                for _ in range(2)]
    other = store_letter(place, b"x" * 5000, exception_type="MemoryError")
    return acme, currency, refunded, other


def test_a_dry_run_counts_what_the_enabled_rule_then_does(memory_broker, operator, settings):
    settings.DLO_BREAKER_SAME = settings.DLO_BREAKER_ANY = 100  # ten letters in a row would open it
    fake, _ = memory_broker
    place = memory_place(memory_broker)
    fake.queue("orders.parking")
    acme, currency, refunded, other = _letters(place)
    api = APIClient()
    api.force_authenticate(operator)

    def rule(**given):
        answer = api.post("/api/rules/", {"reason": "triage", **given}, format="json")
        assert answer.status_code == 201, answer.content
        return answer.json()

    rule(name="acme waits", position=10, match={"header": {"name": "tenant", "value": "acme"}},
         action={"kind": "hold"}, enabled=True)
    failed = rule(name="bad input", position=20, match={"exception_type": "ValueError|TimeoutError"},
                  action={"kind": "mark_failed"})
    parked = rule(name="refunds", position=30, scope={"broker": place.broker_id},
                  match={"body_path": {"path": "$.order.status", "value": "refunded"}, "max_size": 1000},
                  action={"kind": "forward", "target": "orders.parking"})

    dry = api.post(f"/api/rules/{failed['id']}/dry-run/").json()
    assert dry == {"matched": 3, "by_action": {"mark_failed": 3}, "would_run": {"mark_failed": 3}, "refused": [],
                   "sample": [letter.pk for letter in currency]}
    assert api.post(f"/api/rules/{parked['id']}/dry-run/").json() == {
        "matched": 2, "by_action": {"forward": 2}, "would_run": {"forward": 2}, "refused": [],
        "sample": [letter.pk for letter in refunded]}
    assert not Job.objects.exists(), "a dry run changes nothing"

    for made in (failed, parked):
        assert api.patch(f"/api/rules/{made['id']}/", {"enabled": True, "reason": "looks right"},
                         format="json").status_code == 200
    enabled = AuditEvent.objects.get(action="rule.enabled", details__name="bad input")
    assert enabled.details["dry_run"] == dry and enabled.actor_name == "olga"

    apply_rules()
    from console.models import Rule

    assert not any(Rule.objects.values_list("last_error", flat=True)), list(Rule.objects.values_list("last_error"))
    jobs = {job.actor_name: job for job in Job.objects.all()}
    assert set(jobs) == {"rule:bad input@v1", "rule:refunds@v1"}
    assert sorted(jobs["rule:bad input@v1"].selection["ids"]) == dry["sample"]
    assert (jobs["rule:refunds@v1"].kind, jobs["rule:refunds@v1"].params["target"]) == ("move", "orders.parking")
    for job in jobs.values():  # what the worker does with them
        assert run_job(job.pk) == "succeeded"
    assert {letter.state for letter in DeadLetter.objects.filter(pk__in=[c.pk for c in currency])} == {"failed"}
    assert {letter.state for letter in DeadLetter.objects.filter(pk__in=[r.pk for r in refunded])} == {"replayed"}
    assert len(fake.queue("orders.parking")) == 2
    held = LetterHandling.objects.filter(held=True)
    assert sorted(h.letter_id for h in held) == [letter.pk for letter in acme]
    assert DeadLetter.objects.get(pk=other.pk).state == "held"

    apply_rules()  # nothing left for them: held letters are a person's now
    assert Job.objects.count() == 2
    (origin,) = api.get("/api/origins/").json()
    assert origin["policy"].endswith("; then rule 'acme waits' holds for a person; then rule 'bad input' marks "
                                     "failed; then rule 'refunds' forwards to orders.parking"), origin["policy"]


def test_rules_are_versioned_audited_and_only_an_admin_enables_a_discard(memory_broker, operator, admin):
    memory_place(memory_broker)
    api = APIClient()
    api.force_authenticate(operator)
    made = api.post("/api/rules/", {"name": "junk", "match": {"reason": "expired"}, "action": {"kind": "discard"}},
                    format="json").json()
    refused = api.patch(f"/api/rules/{made['id']}/", {"enabled": True}, format="json")
    assert refused.status_code == 400 and "admin" in refused.json()["detail"]

    changed = api.patch(f"/api/rules/{made['id']}/", {"match": {"reason": "maxlen"}}, format="json").json()
    assert (changed["version"], changed["actor"], changed["enabled"]) == (2, "rule:junk@v2", False)
    from console.models import RuleVersion

    assert [v.match for v in RuleVersion.objects.filter(rule_id=made["id"])] == [{"reason": "expired"},
                                                                               {"reason": "maxlen"}]
    admin_api = APIClient()
    admin_api.force_authenticate(admin)
    assert admin_api.patch(f"/api/rules/{made['id']}/", {"enabled": True}, format="json").json()["enabled"] is True
    bad = api.post("/api/rules/", {"name": "x", "match": {"exception_type": "("}, "action": {"kind": "hold"}},
                   format="json")
    assert bad.status_code == 400 and "regular expression" in bad.json()["detail"]
    ladder = api.post("/api/rules/", {"name": "com", "action": {"kind": "retry", "preset": "com+"}}, format="json")
    assert ladder.json()["description"] == ("retries 3 × 1 min, 3 × 2 min, 3 × 4 min, 3 × 8 min, 3 × 16 min, "
                                            "then hold for a person")
    assert api.delete(f"/api/rules/{made['id']}/").status_code == 204
    assert [r["name"] for r in api.get("/api/rules/").json()] == ["com"]
    assert RuleVersion.objects.filter(rule_id=made["id"]).count() == 2
    actions = list(AuditEvent.objects.filter(action__startswith="rule.").order_by("id")
                   .values_list("action", flat=True))
    assert actions == ["rule.created", "rule.changed", "rule.enabled", "rule.created", "rule.deleted"]
