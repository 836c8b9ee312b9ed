"""A retry ladder on the real RabbitMQ: the consumer of ``payments`` keeps rejecting one
message; a rule (steps of seconds: 2 tries after 1 s, then 1 try after 2 s; then mark failed)
replays it at the right times, each try a job asked for by ``rule:<name>@v1`` through the one
door; the message dies again after each try and comes back as a new letter that carries the
count on (not quarantined: the ladder planned those returns); when the ladder has run out, the
letter says so and is marked failed."""

from __future__ import annotations

import time

import pytest
from rest_framework.test import APIClient

from console.jobs.automation.rules_at_work import apply_rules
from console.jobs.door.runner import run_job
from console.models import AuditEvent, DeadLetter, Job
from tests.flow import capture, discovered
from tests.rabbitmq.standing_consumer import REJECT, StandingConsumer

pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db(transaction=True)]

LADDER = [{"delay_seconds": 1, "tries": 2}, {"delay_seconds": 2, "tries": 1}]


@pytest.fixture
def queued_jobs(monkeypatch):
    from console.jobs import tasks

    queued: list[int] = []
    monkeypatch.setattr(tasks.run_job, "delay", queued.append)
    return queued


def test_a_ladder_replays_at_its_steps_then_marks_failed(kit, rabbit_broker, operator, queued_jobs):
    dlq = kit.queue(kit.name("payments.dlq"))
    work = kit.queue(kit.name("payments"), {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})
    # What Spring AMQP's republishing recoverer writes (console.letters.frameworks).
    kit.publish(work, b'{"payment": 42}', headers={
        "x-exception-message": "card declined",
        "x-exception-stacktrace": "com.acme.CardDeclined: card declined\n\tat com.acme.Pay.charge(Pay.java:7)"})
    kit.reject(work)
    kit.wait_depth(dlq, 1)
    place = discovered(rabbit_broker, operator, dlq, scope="/")
    capture(place, operator)

    api = APIClient()
    api.force_authenticate(operator)
    made = api.post("/api/rules/", {
        "name": "card declined", "scope": {"place": place.pk}, "match": {"exception_type": r"CardDecline"},
        "action": {"kind": "retry", "ladder": LADDER, "then": "mark_failed"}, "enabled": True,
        "reason": "card declines clear up by themselves",
    }, format="json")
    assert made.status_code == 201, made.content
    assert made.json()["actor"] == "rule:card declined@v1"

    replays: list[tuple[float, float]] = []  # (seconds after the letter's capture, its try number)
    deadline = time.monotonic() + 60
    with StandingConsumer(kit, work, lambda message: REJECT):
        while not DeadLetter.objects.filter(place=place, state="failed").exists():
            assert time.monotonic() < deadline, f"the ladder did not finish: {_story(place)}"
            apply_rules()
            while queued_jobs:
                job = Job.objects.get(pk=queued_jobs.pop(0))
                if job.kind == "replay":
                    (letter,) = DeadLetter.objects.filter(pk__in=job.selection["ids"])
                    replays.append(((job.created_at - letter.captured_at).total_seconds(), len(replays) + 1))
                run_job(job.pk)
            if kit.depth(dlq):
                capture(place, operator)
            time.sleep(0.2)

    letters = list(DeadLetter.objects.filter(place=place).order_by("id"))
    assert [letter.state for letter in letters] == ["replayed", "replayed", "replayed", "failed"], _story(place)
    assert [letter.replay_count for letter in letters] == [0, 1, 2, 3]
    assert not any(letter.quarantined_at for letter in letters), "a planned return was quarantined"
    waits = [after for after, _ in replays]
    assert len(waits) == 3 and waits[0] >= 1 and waits[1] >= 1 and waits[2] >= 2, waits
    assert all(wait < 8 for wait in waits), f"tries came late: {waits}"

    actors = AuditEvent.objects.filter(action="job.requested", actor_name="rule:card declined@v1")
    assert [event.details["kind"] for event in actors.order_by("id")] == ["replay", "replay", "replay", "mark_failed"]
    assert AuditEvent.objects.filter(action="replay", actor_name="rule:card declined@v1").count() == 3
    ran_out = AuditEvent.objects.get(action="rule.ladder_ran_out")
    assert ran_out.letter_ids == [letters[-1].pk] and ran_out.actor_name == "rule:card declined@v1"
    shown = api.get(f"/api/letters/{letters[-1].pk}/").json()["rule"]
    assert (shown["name"], shown["version"], shown["tries"]) == ("card declined", 1, 3)
    assert "ran out after 3 tries" in shown["note"]
    page = APIClient()
    page.force_login(operator)
    assert "ran out after 3 tries" in page.get(f"/letters/{letters[-1].pk}/").content.decode()
    assert Job.objects.filter(actor_name="rule:card declined@v1", approved_by=operator).count() == 4


def _story(place) -> str:
    return "; ".join(f"{letter.pk} {letter.state} parent={letter.parent_id}"
                     for letter in DeadLetter.objects.filter(place=place).order_by("id"))
