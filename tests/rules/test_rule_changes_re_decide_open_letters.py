"""Issue 29, finding 1: letters are decided once, so whatever can change a decision must decide
the letters it concerns again, once: a change of the rule set (a disabled rule stops taking
letters; an earlier rule newly enabled takes its letters first; an edited rule acts as its new
version), time (a ladder's next try when it is due; a rule's age when the letter reaches it),
and a letter that becomes open again (released, its breaker closed, its rule's job finished).
Letters the change does not concern are not decided again."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from console.jobs.automation.rules_at_work import apply_rules
from console.jobs.control import finish
from console.models import AuditEvent, DeadLetter, Job, LetterHandling, Origin
from console.services.rules import do_create_rule, do_disable, do_enable, do_update_rule
from console.services.safeguards import do_close_breaker, do_release
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db

AN_HOUR_LATER = {"kind": "retry", "ladder": [{"delay_seconds": 3600, "tries": 1}]}


@pytest.fixture
def place(memory_broker, settings):
    settings.DLO_BREAKER_SAME = settings.DLO_BREAKER_ANY = 1000  # many letters in a row open no breaker
    return memory_place(memory_broker)


def _rounds(n: int = 3) -> None:
    for _ in range(n):
        apply_rules()


def _jobs(rule_name: str) -> list[Job]:
    return list(Job.objects.filter(actor_name__startswith=f"rule:{rule_name}@").order_by("id"))


def test_a_disabled_rule_stops_taking_letters(place, operator, decided):
    waits = do_create_rule(actor=operator, name="retry timeouts", position=10, match={"exception_type": "Timeout"},
                           action=AN_HOUR_LATER, enabled=True)
    do_create_rule(actor=operator, name="hold the rest", position=20, action={"kind": "hold"}, enabled=True)
    timeouts = [store_letter(place, exception_type="Timeout").pk for _ in range(3)]
    _rounds()
    assert set(LetterHandling.objects.filter(letter_id__in=timeouts).values_list("rule__name", "action")) == {
        ("retry timeouts", "retry")}, "waiting an hour for their first try"

    do_disable(waits, actor=operator, reason="the retries do not help")
    _rounds()
    held = LetterHandling.objects.filter(held=True, rule__name="hold the rest")
    assert sorted(held.values_list("letter_id", flat=True)) == timeouts, "the next rule takes them now"
    arrived = store_letter(place, exception_type="Timeout").pk
    _rounds()
    assert LetterHandling.objects.get(letter_id=arrived).rule.name == "hold the rest"
    assert not _jobs("retry timeouts")
    assert [decided[letter] for letter in [*timeouts, arrived]] == [2, 2, 2, 1]


def test_an_earlier_rule_newly_enabled_takes_its_letters_first(place, operator, decided):
    do_create_rule(actor=operator, name="retry later", position=20, action=AN_HOUR_LATER, enabled=True)
    acme = [store_letter(place, headers={"tenant": "acme"}).pk for _ in range(2)]
    others = [store_letter(place).pk for _ in range(3)]
    _rounds()
    retrying = LetterHandling.objects.filter(letter_id__in=acme + others, action="retry", next_at__isnull=False)
    assert retrying.count() == 5

    first = do_create_rule(actor=operator, name="acme fails", position=10, action={"kind": "mark_failed"},
                           match={"header": {"name": "tenant", "value": "acme"}})
    _rounds()
    assert not _jobs("acme fails"), "a draft takes nothing"
    do_enable(first, actor=operator, reason="acme's letters are never retried")
    _rounds()
    (job,) = _jobs("acme fails")
    assert (job.kind, sorted(job.selection["ids"])) == ("mark_failed", acme)
    assert not _jobs("retry later")
    assert [decided[letter] for letter in acme + others] == [2, 2, 1, 1, 1], "only the rule's letters again"


def test_an_edited_rule_acts_as_its_new_version(place, operator, decided):
    rule = do_create_rule(actor=operator, name="timeouts", match={"exception_type": "Timeout"},
                          action=AN_HOUR_LATER, enabled=True)
    timeouts = [store_letter(place, exception_type="Timeout").pk for _ in range(2)]
    other = store_letter(place, exception_type="KeyError").pk
    _rounds()
    do_update_rule(rule, actor=operator, action={"kind": "mark_failed"}, reason="they never recover")
    _rounds()
    (job,) = _jobs("timeouts")
    assert (job.actor_name, sorted(job.selection["ids"])) == ("rule:timeouts@v2", timeouts)
    assert decided[other] == 1


def test_a_due_ladder_step_is_acted_on_when_due(place, operator, decided):
    do_create_rule(actor=operator, name="soon", action={"kind": "retry", "ladder": [{"delay_seconds": 2, "tries": 1}]},
                   enabled=True)
    letter = store_letter(place, exception_type="Timeout").pk
    _rounds()
    assert not _jobs("soon") and LetterHandling.objects.get(letter_id=letter).next_at is not None
    deadline = time.monotonic() + 20
    while not _jobs("soon"):
        assert time.monotonic() < deadline, "the try never came"
        _rounds(1)
        time.sleep(0.2)
    (job,) = _jobs("soon")
    assert (job.kind, job.selection["ids"]) == ("replay", [letter])
    assert (job.created_at - DeadLetter.objects.get(pk=letter).captured_at).total_seconds() >= 2, "a try came early"
    assert decided[letter] == 2, "decided when it arrived, then when its try was due"


def test_an_older_than_rule_acts_when_the_letter_gets_old_enough(place, operator, decided):
    do_create_rule(actor=operator, name="stale", match={"exception_type": "Timeout", "older_than_seconds": 4},
                   action={"kind": "mark_failed"}, enabled=True)
    letter = store_letter(place, exception_type="Timeout").pk
    other = store_letter(place, exception_type="KeyError").pk
    _rounds()
    assert not _jobs("stale")
    # A rule enabled after the letter arrived waits for the same moment.
    late = do_create_rule(actor=operator, name="stale too", position=1000, action={"kind": "hold"},
                          match={"exception_type": "KeyError", "older_than_seconds": 4})
    do_enable(late, actor=operator, reason="old key errors wait for a person")
    _rounds()
    assert not LetterHandling.objects.filter(letter_id=other).exists()
    old_enough = DeadLetter.objects.get(pk=other).captured_at + timedelta(seconds=4.1)
    time.sleep(max(0.0, (old_enough - timezone.now()).total_seconds()))
    _rounds()
    (job,) = _jobs("stale")
    assert (job.kind, job.selection["ids"]) == ("mark_failed", [letter])
    assert LetterHandling.objects.get(letter_id=other).held
    assert (decided[letter], decided[other]) == (2, 2)


def test_letters_open_again_are_decided_again(place, operator, decided):
    do_create_rule(actor=operator, name="retry", action={"kind": "retry", "ladder": [{"delay_seconds": 0, "tries": 3}]},
                   enabled=True)
    quarantined, blocked, tried = (store_letter(place, exception_type="Timeout").pk,
                                   store_letter(place, origin="billing", exception_type="Timeout").pk,
                                   store_letter(place, origin="shipping", exception_type="Timeout").pk)
    DeadLetter.objects.filter(pk=quarantined).update(quarantined_at=timezone.now(), quarantine_reason="a loop")
    Origin.objects.filter(name="billing").update(breaker_opened_at=timezone.now(), breaker_reason="3 in a row")
    _rounds()
    (first,) = _jobs("retry")
    assert first.selection["ids"] == [tried]

    do_release(DeadLetter.objects.get(pk=quarantined), actor=operator, reason="fixed")
    do_close_breaker(Origin.objects.get(name="billing"), actor=operator, reason="billing is back")
    finish(first, Job.Status.CANCELLED, "cancelled by a person")  # its letter is still held
    _rounds()
    jobs = _jobs("retry")
    assert sorted(letter for job in jobs[1:] for letter in job.selection["ids"]) == sorted(
        [quarantined, blocked, tried])
    assert AuditEvent.objects.filter(action="job.requested", actor_name="rule:retry@v1").count() == len(jobs)
    assert [decided[letter] for letter in (quarantined, blocked, tried)] == [2, 2, 2]
