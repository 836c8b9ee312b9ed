"""Moving letters to a chosen queue, and replaying to a queue that is gone: RabbitMQ returns
the mandatory publish, and the letter stays held."""

from __future__ import annotations

import pytest

from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import AuditEvent, DeadLetter, Job
from console.services.custody import REPLAY_ID_HEADER

pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db]


def test_move_puts_letters_in_the_chosen_queue(kit, captured, operator):
    work, place, letters = captured("refunds", [(b"r1", {}), (b"r2", {"tenant": "acme"})])
    chosen = kit.queue(kit.name("refunds-manual"))

    job = request_job("move", actor=operator, reason="handle by hand", ids=[letter.id for letter in letters],
                      target=chosen)
    assert run_job(job.pk) == "succeeded"

    moved = kit.drain(chosen)
    assert [m.body for m in moved] == [b"r1", b"r2"]
    assert moved[1].headers["tenant"] == "acme"
    assert {m.headers[REPLAY_ID_HEADER] for m in moved} == {
        letter.replay_id for letter in DeadLetter.objects.filter(place=place)}
    assert set(DeadLetter.objects.filter(place=place).values_list("state", "replayed_to")) == {("replayed", chosen)}
    assert kit.depth(work) == 0


def test_replay_to_a_queue_that_no_longer_exists_leaves_the_letter_held(kit, captured, operator):
    work, place, (letter,) = captured("coupons", [(b"c1", {})])
    kit.delete_queue(work)

    job = request_job("replay", actor=operator, reason="retry", ids=[letter.id])
    run_job(job.pk)

    job = Job.objects.get(pk=job.pk)
    assert (job.done, job.failed) == (0, 1)
    letter.refresh_from_db()
    assert letter.state == "held"
    refused = AuditEvent.objects.get(action="replay", job_id=job.pk, outcome="failed")
    assert refused.letter_ids == [letter.id]
    assert refused.details["errors"] == [f"no queue {work!r} on vhost '/'"]
