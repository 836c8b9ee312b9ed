"""Issue 17, point 6 (SAP's NDLV) on the real RabbitMQ: letters whose replays keep dying come
back linked to their parents; the second return of a lineage is quarantined, rules may not
replay it (console.services.safeguards.rules_may_replay), its API shows why; a person releases
one through the API, which makes it replayable by rules again (an enabled rule that left it alone
replays it then), and marks the other failed."""

from __future__ import annotations

import pytest

from console.jobs.automation.rules_at_work import apply_rules
from console.jobs.door.runner import run_job
from console.models import AuditEvent, DeadLetter, Job
from console.services.audit import verify_chain
from console.services.safeguards import rules_may_replay

pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db]


def test_a_letter_that_comes_back_twice_after_replays_is_quarantined_until_a_person_acts(
        kit, captured, rounds, operator_api):
    work, place, firsts = captured("loop", [(b'{"order": 1}', {}), (b'{"order": 2}', {})])
    assert [(f.replay_count, f.quarantined_at) for f in firsts] == [(0, None), (0, None)]

    lineage = [firsts]
    for _ in range(2):  # the fix did not work: each replay is rejected again by the consumer
        rounds.replay([letter.pk for letter in lineage[-1]])
        kit.reject(work, count=2)
        kit.wait_depth(place.name, 2)
        rounds.capture(place)
        lineage.append(list(DeadLetter.objects.filter(place=place, state="held").order_by("id")))

    once, twice = lineage[1], lineage[2]
    assert [r.parent_id for r in once] == [f.pk for f in firsts]
    assert [(r.replay_count, r.quarantined_at is None) for r in once] == [(1, True), (1, True)]
    assert [r.parent_id for r in twice] == [r.pk for r in once]
    assert [(r.replay_count, r.quarantined_at is not None) for r in twice] == [(2, True), (2, True)]

    held = DeadLetter.objects.filter(place=place, state="held")
    assert list(rules_may_replay(held)) == []
    # An enabled rule that would replay them leaves them alone while they are quarantined.
    made = operator_api.post("/api/rules/", {
        "name": "retry loops", "scope": {"place": place.pk}, "enabled": True,
        "action": {"kind": "retry", "ladder": [{"delay_seconds": 0, "tries": 3}]}}, format="json").json()
    dry = operator_api.post(f"/api/rules/{made['id']}/dry-run/").json()
    assert (dry["by_action"], dry["would_run"]) == ({"retry": 2}, {"retry": 0})
    assert [(r["action"], r["code"], r["count"]) for r in dry["refused"]] == [("retry", "quarantined", 2)]
    apply_rules()
    assert not Job.objects.filter(actor_name="rule:retry loops@v1").exists()
    shown = operator_api.get(f"/api/letters/{twice[0].pk}/").json()
    assert (shown["quarantined"], shown["replay_count"]) == (True, 2)
    assert "came back 2 times after replays" in shown["quarantine_reason"]
    automatic = AuditEvent.objects.get(action="quarantine")
    assert (automatic.actor_name, sorted(automatic.letter_ids)) == ("system:safeguards", [r.pk for r in twice])

    refused = operator_api.post(f"/api/letters/{twice[0].pk}/release/", {}, format="json")
    assert refused.status_code == 400 and DeadLetter.objects.get(pk=twice[0].pk).quarantined_at is not None
    released = operator_api.post(f"/api/letters/{twice[0].pk}/release/",
                                 {"reason": "consumer redeployed with the real fix"}, format="json")
    assert released.status_code == 200, released.content
    assert (released.json()["quarantined"], released.json()["quarantine_reason"]) == (False, "")
    assert list(rules_may_replay(held)) == [DeadLetter.objects.get(pk=twice[0].pk)]
    apply_rules()  # released: the rule replays it now, and only it
    (job,) = Job.objects.filter(actor_name="rule:retry loops@v1")
    assert (job.kind, job.selection["ids"]) == ("replay", [twice[0].pk])
    event = AuditEvent.objects.get(action="release")
    assert (event.actor_name, event.letter_ids, event.reason) == (
        "olga", [twice[0].pk], "consumer redeployed with the real fix")

    failed = operator_api.post("/api/jobs/", {"action": "mark_failed", "letters": [twice[1].pk],
                                              "reason": "gives up: a poison order"}, format="json")
    assert failed.status_code == 202, failed.content
    assert run_job(failed.json()["id"]) == "succeeded"
    assert DeadLetter.objects.get(pk=twice[1].pk).state == "failed"
    assert verify_chain().ok
