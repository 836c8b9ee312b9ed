"""Issue 29, "what to build" 4, on the real RabbitMQ: a rule's dry run runs the check step its
rounds run (console.services.rules.checks), so its per-action counts equal what the enabled rule
then does, for every action kind (retry, forward, mark_failed, discard, hold) and every refusal
reason: quarantined, breaker open, broker unreachable (the broker's management API cannot say
where a limited enabler's letters' origin dead-letters) and target refused (a forward by an
admin limited since to the place). What is refused stays held; what would run is asked for."""

from __future__ import annotations

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from console.access.roles import ADMIN, OPERATOR, set_role
from console.jobs.automation.rules_at_work import apply_rules
from console.jobs.door.runner import run_job
from console.models import (
    Broker,
    DeadLetter,
    Job,
    LetterHandling,
    Origin,
    RoleScope,
    Rule,
)

pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db]

CASES = ["retry", "retry", "retry", "forward", "fail", "fail", "junk", "wait", "far"]


def _as(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def _refused(dry) -> list[tuple[str, str, int]]:
    return sorted((r["action"], r["code"], r["count"]) for r in dry["refused"])


def _done(rule_id: int) -> list[int]:
    """The letters the rule acted on: those of the jobs it asked for, and those it held."""
    rule = Rule.objects.get(pk=rule_id)
    ids = [i for job in Job.objects.filter(actor_name=f"rule:{rule.name}@v{rule.version}")
           for i in job.selection["ids"]]
    return sorted(ids + list(LetterHandling.objects.filter(rule=rule, held=True).values_list("letter_id", flat=True)))


def test_every_action_and_every_refusal_counted_as_the_rule_then_does(
        kit, captured, rounds, rabbit_broker, operator, admin, django_user_model, settings):
    settings.DLO_BREAKER_SAME = settings.DLO_BREAKER_ANY = 100  # no breaker opens by itself here
    parked = kit.queue(kit.name("truth.parked"))
    work, place, letters = captured("truth", [(f'{{"n": {n}}}'.encode(), {"case": case})
                                              for n, case in enumerate(CASES)])
    work2, place2, broken = captured("truth-breaker", [(b'{"n": 10}', {"case": "retry"}),
                                                       (b'{"n": 11}', {"case": "retry"})])
    retries, (forward,), fails, (junk,), (wait,), (far,) = (
        letters[0:3], letters[3:4], letters[4:6], letters[6:7], letters[7:8], letters[8:9])
    DeadLetter.objects.filter(pk=retries[2].pk).update(quarantined_at=timezone.now(),
                                                       quarantine_reason="came back 2 times after replays")
    Origin.objects.filter(broker=place2.broker, name=work2).update(breaker_opened_at=timezone.now(),
                                                                   breaker_reason="3 in a row")
    otto = django_user_model.objects.create_user("otto")
    set_role(otto, OPERATOR)
    RoleScope.objects.create(user=otto, place=place)
    olga, ada = _as(operator), _as(admin)

    def rule(api, name, case, action, where=place):
        made = api.post("/api/rules/", {"name": name, "scope": {"place": where.pk}, "enabled": True,
                                        "match": {"header": {"name": "case", "value": case}}, "action": action,
                                        "reason": "triage"}, format="json")
        assert made.status_code == 201, made.content
        return made.json()["id"]

    retry = {"kind": "retry", "ladder": [{"delay_seconds": 0, "tries": 3}]}
    rules = {
        "retry": rule(olga, "retry", "retry", retry),
        "breaker": rule(olga, "retry breaker", "retry", retry, where=place2),
        "forward": rule(ada, "park", "forward", {"kind": "forward", "target": parked}),
        "fail": rule(olga, "give up", "fail", {"kind": "mark_failed"}),
        "junk": rule(ada, "junk", "junk", {"kind": "discard"}),
        "wait": rule(olga, "wait", "wait", {"kind": "hold"}),
        "far": rule(_as(otto), "far", "far", retry),
    }
    # The broker's management API stops answering: where an origin dead-letters is unknown.
    management = rabbit_broker.management_url
    Broker.objects.filter(pk=rabbit_broker.pk).update(management_url="http://127.0.0.1:9")

    dry = {key: olga.post(f"/api/rules/{rule_id}/dry-run/").json() for key, rule_id in rules.items()}
    expected = {  # by_action, would_run, refused
        "retry": ({"retry": 3}, {"retry": 2}, [("retry", "quarantined", 1)]),
        "breaker": ({"retry": 2}, {"retry": 0}, [("retry", "breaker_open", 2)]),
        "forward": ({"forward": 1}, {"forward": 1}, []),
        "fail": ({"mark_failed": 2}, {"mark_failed": 2}, []),
        "junk": ({"discard": 1}, {"discard": 1}, []),
        "wait": ({"hold": 1}, {"hold": 1}, []),
        "far": ({"retry": 1}, {"retry": 0}, [("retry", "broker_unreachable", 1)]),
    }
    assert {key: (d["by_action"], d["would_run"], _refused(d)) for key, d in dry.items()} == expected

    apply_rules()
    done = {key: _done(rule_id) for key, rule_id in rules.items()}
    assert {key: len(ids) for key, ids in done.items()} == {
        key: sum(d["would_run"].values()) for key, d in dry.items()}
    assert done["retry"] == [retries[0].pk, retries[1].pk]
    assert (done["forward"], done["fail"], done["junk"], done["wait"]) == (
        [forward.pk], [f.pk for f in fails], [junk.pk], [wait.pk])
    refused = [retries[2], *broken, far]
    assert {letter.state for letter in DeadLetter.objects.filter(pk__in=[r.pk for r in refused])} == {"held"}
    errors = dict(Rule.objects.filter(pk__in=rules.values()).values_list("pk", "last_error"))
    assert "could not be asked" in errors.pop(rules["far"])
    assert not any(errors.values()), errors  # the safeguards' waits are not the rule failing

    Broker.objects.filter(pk=rabbit_broker.pk).update(management_url=management)
    for job in Job.objects.filter(actor_name__startswith="rule:"):
        assert run_job(job.pk) == "succeeded", job.log
    assert [message.body for message in kit.drain(parked)] == [b'{"n": 3}']
    assert sorted(message.body for message in kit.drain(work)) == [b'{"n": 0}', b'{"n": 1}']  # the retries

    # An admin limited to the place since enabling his forward: its target is refused now.
    adam = django_user_model.objects.create_user("adam")
    set_role(adam, ADMIN)
    later = rule(_as(adam), "park later", "later", {"kind": "forward", "target": parked})
    RoleScope.objects.create(user=adam, place=place)
    kit.publish(work, b'{"n": 12}', headers={"case": "later"})
    kit.reject(work)
    kit.wait_depth(place.name, 1)
    rounds.capture(place)
    dry = olga.post(f"/api/rules/{later}/dry-run/").json()
    assert (dry["by_action"], dry["would_run"], _refused(dry)) == (
        {"forward": 1}, {"forward": 0}, [("forward", "target_refused", 1)])
    assert parked in dry["refused"][0]["reason"]
    apply_rules()
    assert _done(later) == [] and kit.depth(parked) == 0
    assert parked in Rule.objects.get(pk=later).last_error
