"""Issue 29, finding 1: a round of the rules cost as much as everything held, every time (each
round decided every held letter again). Now letters arriving while rules are enabled are
decided once: over many rounds, a letter no rule takes is evaluated exactly once, a letter a
rule holds or marks failed once, and a letter only once more when it really becomes open again
(here: released from quarantine). A round with nothing new and nothing due is one probe of the
rules' inbox."""

from __future__ import annotations

import pytest
from django.utils import timezone

from console.jobs.automation.rules_at_work import apply_rules
from console.models import DeadLetter, Job, LetterHandling, RuleInbox
from console.services.rules import do_create_rule
from console.services.safeguards import do_release
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


def test_letters_arriving_while_rules_are_enabled_are_decided_once(
        memory_broker, operator, settings, decided, django_assert_max_num_queries):
    settings.DLO_BREAKER_SAME = settings.DLO_BREAKER_ANY = 1000  # many letters in a row open no breaker
    place = memory_place(memory_broker)
    for name, match, action in [
        ("acme waits", {"header": {"name": "tenant", "value": "acme"}}, {"kind": "hold"}),
        ("bad input", {"exception_type": "^ValueError$"}, {"kind": "mark_failed"}),
        ("loops", {"exception_type": "^Loop$"}, {"kind": "retry", "ladder": [{"delay_seconds": 0, "tries": 3}]}),
        ("never", {"body_path": {"path": "$.kind", "value": "never"}}, {"kind": "hold"}),
    ]:
        do_create_rule(actor=operator, name=name, match=match, action=action, enabled=True, reason="triage")

    quiet = [store_letter(place, b'{"kind": "order"}', exception_type="KeyError").pk for _ in range(5)]
    acme = [store_letter(place, headers={"tenant": "acme"}, exception_type="KeyError").pk for _ in range(2)]
    bad = [store_letter(place, exception_type="ValueError").pk for _ in range(2)]
    loop = store_letter(place, exception_type="Loop").pk
    DeadLetter.objects.filter(pk=loop).update(quarantined_at=timezone.now(), quarantine_reason="a loop")

    for _ in range(10):
        apply_rules()
    assert {letter: decided[letter] for letter in quiet + acme + bad + [loop]} == dict.fromkeys(
        quiet + acme + bad + [loop], 1)
    assert sorted(LetterHandling.objects.filter(held=True).values_list("letter_id", flat=True)) == acme
    (failing,) = Job.objects.filter(actor_name="rule:bad input@v1")
    assert sorted(failing.selection["ids"]) == bad
    assert not Job.objects.filter(actor_name="rule:loops@v1").exists(), "a quarantined letter was replayed"

    later = [store_letter(place, exception_type="KeyError").pk for _ in range(3)]
    for _ in range(10):
        apply_rules()
    assert {letter: decided[letter] for letter in quiet + later} == dict.fromkeys(quiet + later, 1)

    assert not RuleInbox.objects.exists()
    with django_assert_max_num_queries(3):  # the round's lock, one probe of the inbox, the unlock
        assert apply_rules() == {}

    do_release(DeadLetter.objects.get(pk=loop), actor=operator, reason="the consumer is fixed")
    for _ in range(5):
        apply_rules()
    (replay,) = Job.objects.filter(actor_name="rule:loops@v1")
    assert replay.selection["ids"] == [loop]
    assert decided[loop] == 2, "a released letter is decided once more"
    assert {letter: decided[letter] for letter in quiet + acme + bad + later} == dict.fromkeys(
        quiet + acme + bad + later, 1)
