"""A real ``celery -A console worker`` process runs a job made through the services.

The worker uses the embedded transport (kombu's filesystem transport) in a folder of its own
and the test database; the job is queued by the service on commit, exactly as in production.
"""

from __future__ import annotations

import pytest

from console.brokers.memory.adapter import Message
from console.jobs.requests import request_job
from console.models import AuditEvent, DeadLetter, Job
from console.services.brokers import do_discover
from console.services.custody import store_captured
from tests.workers import JobWatch, Worker


@pytest.fixture
def watch(filesystem_transport, tmp_path):
    process = Worker(filesystem_transport, tmp_path / "worker.log")
    process.start()
    yield JobWatch(process, wait_seconds=60)
    # Its work is checked in the database by then; a warm shutdown would only cost seconds.
    process.kill()


@pytest.mark.django_db(transaction=True)
def test_a_real_worker_runs_a_job_made_through_the_services(memory_broker, watch, operator, tmp_path):
    fake, broker = memory_broker
    fake.queue("orders")
    for i in range(3):
        fake.queue("orders.dlq").append(Message(f"order {i}".encode(), {"x-origin-queue": "orders"}))
    (place,) = do_discover(broker, actor=operator)
    with broker.adapter().open_capture(place.ref, prefetch=10) as session:
        batch = session.next_batch(10, 0)
        ids = store_captured(place, batch, job=None, actor=operator).ids
        session.ack(batch)

    job = request_job("mark_failed", actor=operator, reason="won't fix: test orders", ids=ids[:2])
    assert list((tmp_path / "celery" / "queue").iterdir()), "the service queued no task on commit"

    watch.finish(job)
    assert job.status == Job.Status.SUCCEEDED, watch.explain(job, "the job did not succeed")
    assert "Task console.run_job[" in watch.worker.log(tail=10**6)
    assert job.done == 2
    states = dict(DeadLetter.objects.values_list("id", "state"))
    assert states == {ids[0]: "failed", ids[1]: "failed", ids[2]: "held"}
    event = AuditEvent.objects.get(action="mark_failed")
    assert (event.actor_name, event.letter_ids, event.job_id) == ("olga", ids[:2], job.pk)
