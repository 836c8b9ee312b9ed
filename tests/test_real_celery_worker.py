"""A real ``celery -A console worker`` process runs a job made through the services.

The worker uses the embedded transport (kombu's filesystem transport) in a folder of its own
and the test database; the job is queued by the service on commit, exactly as in production.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from console.brokers.child_process import SPARE_NAME
from console.brokers.memory.adapter import Message
from console.jobs.door.requests import request_job
from console.models import AuditEvent, Broker, DeadLetter, Job
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


def _descendants(pid: int) -> list[int]:
    children = [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    return children + [grandchild for child in children for grandchild in _descendants(child)]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("pool", ["prefork", "solo"])
def test_a_worker_starts_with_a_spare_reader_and_publisher_where_its_tasks_run(
        memory_broker, filesystem_transport, tmp_path, pool):
    """For each kind of broker configured (a memory broker runs in the worker: none for it), a
    spare reader and publisher wait where the tasks run: in the pool's process, or in the
    worker itself with the solo pool."""
    Broker.objects.create(name="rabbit", kind="rabbitmq", url="amqp://127.0.0.1:5672/")
    worker = Worker(filesystem_transport, tmp_path / "worker.log")
    worker.command = [*worker.command[:worker.command.index("--pool")], "--pool", pool, "--concurrency", "1",
                      *worker.command[worker.command.index("--pool") + 2:]]
    process = worker.start()
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            spares = [pid for pid in _descendants(process.pid)
                      if Path(f"/proc/{pid}/comm").read_text().strip() == SPARE_NAME]
            if len(spares) == 2:
                break
            time.sleep(0.2)
        assert len(spares) == 2, worker.log()
        modules = sorted(Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[2].decode() for pid in spares)
        assert modules == ["console.brokers.capture_process", "console.brokers.publish_process"]
        parents = {int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]) for pid in spares}
        if pool == "solo":
            assert parents == {process.pid}
        else:
            assert parents != {process.pid} and parents <= set(_descendants(process.pid))
    finally:
        worker.kill()
