"""A job whose worker died mid-way resumes from its cursor; a live one is not run twice."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from console.brokers.memory.adapter import Message
from console.jobs.control import claim
from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.jobs.door.steering import do_resume_job
from console.models import AuditEvent, DeadLetter, Job, LetterFlight
from console.services.brokers import do_discover
from console.services.jobs import JobError

pytestmark = pytest.mark.django_db


@pytest.fixture
def held_letters(memory_broker, operator):
    fake, broker = memory_broker
    fake.queue("orders")
    for i in range(5):
        fake.queue("orders.dlq").append(Message(b"%d" % i, {"x-origin-queue": "orders"}))
    (place,) = do_discover(broker, actor=operator)
    run_job(request_job("capture", place=place, actor=operator, reason="r").pk)
    return fake, list(DeadLetter.objects.order_by("id"))


def test_a_running_job_with_a_fresh_heartbeat_is_not_claimed_twice(held_letters, operator):
    job = request_job("replay", actor=operator, reason="r", ids=[held_letters[1][0].id])
    assert claim(job.pk) is not None
    assert claim(job.pk) is None


def test_resuming_a_live_job_by_hand_does_not_run_it_twice(held_letters, operator):
    job = request_job("replay", actor=operator, reason="r", ids=[held_letters[1][0].id])
    assert claim(job.pk) is not None  # a worker runs it, its heartbeat fresh
    with pytest.raises(JobError, match="running"):
        do_resume_job(job, actor=operator, reason="impatient")
    assert Job.objects.get(pk=job.pk).status == Job.Status.RUNNING
    assert claim(job.pk) is None
    assert not AuditEvent.objects.filter(action="job.resume").exists()


def test_a_job_whose_worker_died_can_be_resumed_by_hand(held_letters, operator):
    job = request_job("replay", actor=operator, reason="r", ids=[letter.id for letter in held_letters[1]])
    claim(job.pk)
    Job.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    do_resume_job(job, actor=operator, reason="its worker died")
    assert run_job(job.pk) == "succeeded"
    assert set(DeadLetter.objects.values_list("state", flat=True)) == {"replayed"}
    assert not LetterFlight.objects.exists()


def test_a_job_killed_mid_replay_resumes_and_republishes_with_the_same_replay_id(held_letters, operator, settings):
    fake, letters = held_letters
    settings.DLO_BATCH_SIZE = 2
    job = request_job("replay", actor=operator, reason="r", ids=[letter.id for letter in letters])
    # The worker took the first batch into flight, published it (confirmed) and died before
    # recording it.
    claim(job.pk)
    for letter in letters[:2]:
        LetterFlight.objects.create(letter=letter, job=job, replay_id=f"rid-{letter.id}")
        fake.queue("orders").append(Message(letter.body_bytes, {"x-dlo-replay-id": f"rid-{letter.id}"}))
    Job.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))

    assert run_job(job.pk) == "succeeded"
    delivered = [m.headers["x-dlo-replay-id"] for m in fake.queue("orders")]
    assert len(delivered) == 7  # two duplicates, at most one batch, carrying the same ids
    assert delivered.count(f"rid-{letters[0].id}") == 2
    assert set(DeadLetter.objects.values_list("state", flat=True)) == {"replayed"}
    assert not LetterFlight.objects.exists()
