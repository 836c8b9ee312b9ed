"""The dry run decides in one query what a round decides letter by letter
(console.services.rules.deciding: ``decided`` and ``decide``): the first match, a retry's
tries counted over the lineage (a return takes its parent's count on, a letter's own handling
comes first), a ladder that ran out (its ``then``, or the next rule), a rule passed over for a
lineage its ladder ran out for, and a quarantined letter that a retry leaves held."""

from __future__ import annotations

from collections import Counter

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from console.jobs.automation.rules_at_work import apply_rules
from console.models import DeadLetter, LetterHandling, Origin, Rule, RuleInbox
from console.services.rules import deciding, do_create_rule, dry_run
from console.services.rules.deciding import decide
from console.services.rules.matching import enabled_rules, open_letters
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


def test_the_dry_run_counts_each_letter_as_decide_decides_it(memory_broker, operator, settings):
    settings.DLO_BREAKER_SAME = settings.DLO_BREAKER_ANY = 100
    place = memory_place(memory_broker)
    api = APIClient()
    api.force_authenticate(operator)

    def rule(**given) -> Rule:
        answer = api.post("/api/rules/", {"reason": "lineage", **given}, format="json")
        assert answer.status_code == 201, answer.content
        return Rule.objects.get(pk=answer.json()["id"])

    first = rule(name="timeouts twice", position=10, match={"exception_type": "TimeoutError"}, enabled=True,
                 action={"kind": "retry", "ladder": [{"tries": 2, "delay_seconds": 0}], "then": "next_rule"})
    second = rule(name="timeouts and keys once", position=20, match={"exception_type": "Timeout|Key"}, enabled=True,
                  action={"kind": "retry", "ladder": [{"tries": 1, "delay_seconds": 0}], "then": "hold"})
    draft = rule(name="everything thrice", position=30, match={"exception_type": "."},
                 action={"kind": "retry", "ladder": [{"tries": 3, "delay_seconds": 0}], "then": "mark_failed"})

    def letter(exception: str, *, rule: Rule | None = None, tries: int = 0, ran_out: tuple[Rule, ...] = (),
               handled: bool = False, parent: DeadLetter | None = None, quarantined: bool = False) -> DeadLetter:
        made = store_letter(place, b"{}", exception_type=exception)
        if rule is not None or ran_out or handled:
            LetterHandling.objects.create(letter=made, rule=rule, tries=tries, ran_out=[r.pk for r in ran_out])
        DeadLetter.objects.filter(pk=made.pk).update(
            parent=parent, quarantined_at=timezone.now() if quarantined else None)
        return made

    returned_twice = store_letter(place, b"{}", exception_type="ValueError")
    LetterHandling.objects.create(letter=returned_twice, rule=draft, tries=3)
    DeadLetter.objects.filter(pk=returned_twice.pk).update(state="replayed")
    expected = {
        "first's": letter("TimeoutError"),
        "first ran out, second's": letter("TimeoutError", rule=first, tries=2),
        "both passed over, draft retries": letter("TimeoutError", rule=first, tries=2, ran_out=(second,)),
        "second ran out, holds": letter("KeyError", rule=second, tries=1),
        "draft ran out, marks failed": letter("ValueError", rule=draft, tries=3),
        "quarantined, blocked": letter("ValueError", quarantined=True),
        "its parent ran out, marks failed": letter("ValueError", parent=returned_twice),
        "draft passed over": letter("ValueError", ran_out=(draft,)),
        "draft retries": letter("ValueError"),
        "draft's second try": letter("ValueError", rule=draft, tries=1),
        "its own handling first, retries": letter("ValueError", handled=True, parent=returned_twice),
    }

    dry = dry_run(draft, reader=operator)

    rounds = [d for d in decide([first, second, draft], open_letters()) if d.rule.pk == draft.pk]
    per_action = Counter(draft.action["kind"] if d.what == "blocked" else d.what for d in rounds)
    assert dry.by_action == dict(per_action) == {"retry": 5, "mark_failed": 2}
    assert dry.matched == len(rounds) == 7
    assert dry.sample == sorted(d.letter_id for d in rounds)
    assert set(dry.sample) == {expected[name].pk for name in (
        "both passed over, draft retries", "draft ran out, marks failed", "quarantined, blocked",
        "its parent ran out, marks failed", "draft retries", "draft's second try", "its own handling first, retries")}
    assert dry.would_run == {"retry": 4, "mark_failed": 2}
    assert [(r["action"], r["code"], r["count"]) for r in dry.refused] == [("retry", "quarantined", 1)]


def test_once_the_rounds_have_decided_the_dry_run_asks_the_earlier_rules_only_what_is_left(
        memory_broker, operator, settings, monkeypatch):
    """Issue 50: a dry run asks the earlier rules only about the letters still in the rules' inbox
    and those held back (quarantined, breaker open); every other open letter was decided by the
    rounds, none taking it. The answer is decide()'s, and the same when every letter is asked."""
    settings.DLO_BREAKER_SAME = settings.DLO_BREAKER_ANY = 1000
    place = memory_place(memory_broker)
    for name, match, action in [
        ("acme waits", {"header": {"name": "tenant", "value": "acme"}}, {"kind": "hold"}),
        ("loops", {"exception_type": "^Loop$"}, {"kind": "retry", "ladder": [{"delay_seconds": 0, "tries": 3}]}),
        ("old ones wait", {"older_than_seconds": 3600, "exception_type": "^Old$"}, {"kind": "hold"}),
    ]:
        do_create_rule(actor=operator, name=name, match=match, action=action, enabled=True, reason="triage")
    quiet = [store_letter(place, exception_type="KeyError").pk for _ in range(3)]
    acme = [store_letter(place, headers={"tenant": "acme"}, exception_type="KeyError").pk for _ in range(2)]
    quarantined = store_letter(place, exception_type="Loop").pk
    DeadLetter.objects.filter(pk=quarantined).update(quarantined_at=timezone.now(), quarantine_reason="a loop")
    behind_breaker = store_letter(place, exception_type="Loop", origin="payments").pk
    Origin.objects.update_or_create(broker_id=place.broker_id, scope=place.scope, name="payments",
                                    defaults={"breaker_opened_at": timezone.now(), "breaker_reason": "a storm"})
    young = store_letter(place, exception_type="Old").pk  # the age rule waits for it: in the inbox, due later
    for _ in range(5):
        apply_rules()
    assert sorted(LetterHandling.objects.filter(held=True).values_list("letter_id", flat=True)) == acme
    assert list(RuleInbox.objects.values_list("letter_id", flat=True)) == [young]
    arriving = store_letter(place, headers={"tenant": "acme"}, exception_type="KeyError").pk  # not decided yet

    draft = Rule(name="everything", match={"exception_type": "."}, action={"kind": "hold"}, position=10_000)
    asked_few = dry_run(draft, reader=operator)
    monkeypatch.setattr(deciding, "INBOX_ASKED", 0)  # as when a rule set just changed: every letter is asked
    asked_all = dry_run(draft, reader=operator)

    rounds = [d for d in decide([*enabled_rules(), draft], open_letters()) if d.rule.pk is None]
    # The young one is not old enough for its rule yet: the draft takes it, as the quiet ones.
    assert asked_few.sample == asked_all.sample == sorted(d.letter_id for d in rounds) == sorted([*quiet, young])
    assert asked_few.matched == asked_all.matched == 4
    assert {quarantined, behind_breaker, arriving}.isdisjoint(asked_few.sample)
