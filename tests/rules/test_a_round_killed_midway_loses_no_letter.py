"""Issue 29, finding 1: a round decides each letter once, from the rules' inbox, so a round that
dies midway (its worker killed after acting on some letters) must lose none of the others: the
rows it took stay in the inbox until it has acted, the next round takes them again, and what the
dead round acted on is not asked for twice."""

from __future__ import annotations

import pytest

from console.jobs.automation import rules_at_work as rounds
from console.jobs.automation.rules_at_work import apply_rules
from console.models import AuditEvent, Job, RuleInbox
from console.services.rules import do_create_rule
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


class Killed(Exception):
    pass


def test_a_round_killed_after_its_first_action_loses_no_letter(memory_broker, operator, monkeypatch):
    place = memory_place(memory_broker)
    do_create_rule(actor=operator, name="acme waits", match={"header": {"name": "tenant", "value": "acme"}},
                   action={"kind": "hold"}, enabled=True)
    do_create_rule(actor=operator, name="bad input", match={"exception_type": "ValueError"},
                   action={"kind": "mark_failed"}, enabled=True)
    acme = [store_letter(place, headers={"tenant": "acme"}).pk for _ in range(2)]
    bad = [store_letter(place, exception_type="ValueError").pk for _ in range(2)]
    quiet = store_letter(place).pk

    real, acts = rounds._act, []

    def dies_at_the_second_action(rule, what, decisions):
        acts.append(what)
        if len(acts) == 2:
            raise Killed
        return real(rule, what, decisions)

    monkeypatch.setattr(rounds, "_act", dies_at_the_second_action)
    with pytest.raises(Killed):
        apply_rules()
    assert acts == ["hold", "mark_failed"]
    assert sorted(RuleInbox.objects.values_list("letter_id", flat=True)) == sorted(acme + bad + [quiet])

    monkeypatch.setattr(rounds, "_act", real)
    apply_rules()
    assert AuditEvent.objects.filter(action="rule.hold").count() == 1, "the held letters were held again"
    (job,) = Job.objects.filter(actor_name="rule:bad input@v1")
    assert sorted(job.selection["ids"]) == bad
    assert not RuleInbox.objects.exists()
