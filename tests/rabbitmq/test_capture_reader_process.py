"""A capture reads the broker in a child process (console.brokers.capture_process). Whatever
happens to that process, nothing is lost: a reader killed mid-capture is replaced and the job
completes with every letter stored once; a reader whose parent is gone exits and the broker
takes back what it held; the broker's refusals reach the job as they would in process."""

from __future__ import annotations

import os
import signal
from collections import Counter

import aio_pika
import pytest

from console.brokers import BrokerError, PlaceRef
from console.brokers.capture_process import ChildCapture
from console.jobs.door.requests import request_job
from console.models import DeadLetter, Job
from console.services.brokers import do_discover
from tests.flow import JobThread
from tests.rabbitmq.conftest import rabbit_config
from tests.workers import readers_of, spares_of

pytestmark = pytest.mark.rabbitmq


@pytest.mark.django_db(transaction=True)
def test_a_reader_killed_mid_capture_is_replaced_and_nothing_is_lost(kit, rabbit_broker, operator, settings):
    settings.DLO_BATCH_SIZE = 50
    count = 3000
    dlq = kit.queue(kit.name("reader-killed") + ".dlq")
    kit.publish_many(dlq, [aio_pika.Message(f"letter {n}".encode(), message_id=f"m{n}") for n in range(count)])
    kit.wait_depth(dlq, count)
    (place,) = [p for p in do_discover(rabbit_broker, actor=operator) if p.name == dlq]
    job = request_job("capture", place=place, actor=operator, reason="reader killed mid-capture")

    runner = JobThread(job.pk)
    runner.start()
    try:
        kit.wait_for(lambda: readers_of(os.getpid()), "the capture's reader process")
        (reader,) = readers_of(os.getpid())
        kit.wait_for(lambda: Job.objects.get(pk=job.pk).done >= 200, "the first batches stored")
        os.kill(reader, signal.SIGKILL)
    finally:
        runner.join(120)

    job.refresh_from_db()
    assert runner.outcome == [Job.Status.SUCCEEDED], job.error
    stored = Counter(DeadLetter.objects.filter(place=place).values_list("message_id", flat=True))
    assert set(stored) == {f"m{n}" for n in range(count)}, "every message is in custody"
    assert max(stored.values()) == 1, "no message is stored twice"
    assert job.done == count and kit.depth(dlq) == 0
    notes = " ".join(line["message"] for line in job.log)
    assert "reader process" in notes and "was killed (signal 9)" in notes, notes
    assert not readers_of(os.getpid()), "the replacement reader exits with the capture"


def test_a_reader_whose_parent_is_gone_exits_and_the_broker_takes_its_messages_back(kit):
    dlq = kit.queue(kit.name("orphan") + ".dlq")
    kit.publish_many(dlq, [aio_pika.Message(f"letter {n}".encode()) for n in range(20)])
    kit.wait_depth(dlq, 20)

    session = ChildCapture(rabbit_config(), PlaceRef(dlq), prefetch=20)
    batch = session.next_batch(5, wait_seconds=2)
    assert [m.body for m in batch] == [f"letter {n}".encode() for n in range(5)]
    assert kit.depth(dlq) < 20, "the reader holds what it took, unacknowledged"

    process = session._process
    process.stdin.close()  # what the parent's death does to the reader's commands
    assert process.wait(10) == 0
    kit.wait_for(lambda: kit.depth(dlq) == 20, "the broker taking back the reader's messages")
    process.stdout.close()


def test_the_broker_refusing_the_capture_reaches_the_parent_as_it_is(kit):
    with pytest.raises(BrokerError) as refused:
        ChildCapture(rabbit_config(), PlaceRef(kit.name("no-such") + ".dlq"), prefetch=10)
    assert refused.value.permanent and "no queue" in refused.value.message

    with pytest.raises(BrokerError) as unreachable:
        ChildCapture(rabbit_config(url="amqp://127.0.0.1:5999/%2F"), PlaceRef("any.dlq"), prefetch=10)
    assert not unreachable.value.permanent and "5999" in unreachable.value.message


def test_a_closed_reader_leaves_a_spare_that_the_next_capture_takes(kit):
    """The next capture's reader is already started, its client imported: it is the spare the
    last one left (same process), and a spare whose parent is gone exits."""
    dlq = kit.queue(kit.name("spare") + ".dlq")
    kit.publish_many(dlq, [aio_pika.Message(f"letter {n}".encode()) for n in range(4)])
    kit.wait_depth(dlq, 4)

    others = set(spares_of(os.getpid()))  # spares other tests' children left (other brokers, publishers)

    def new_spares() -> set[int]:
        return set(spares_of(os.getpid())) - others

    first = ChildCapture(rabbit_config(), PlaceRef(dlq), prefetch=10)  # may be a spare left before
    others.discard(first._process.pid)
    first.close()
    kit.wait_for(lambda: len(new_spares()) == 1, "the spare the reader left")
    (spare,) = new_spares()
    assert spare not in readers_of(os.getpid()), "a spare is not a reader until it has work"

    second = ChildCapture(rabbit_config(), PlaceRef(dlq), prefetch=10)
    try:
        assert second._process.pid == spare and spare in readers_of(os.getpid())
        assert [m.body for m in second.next_batch(4, wait_seconds=2)] == [f"letter {n}".encode() for n in range(4)]
    finally:
        second.close()
    kit.wait_for(lambda: len(new_spares() - {spare}) == 1, "the spare the second reader left")
    assert kit.depth(dlq) == 4, "what a closed reader took unacknowledged is back on the queue"

    from console.brokers import child_process

    with child_process._spares_lock:
        process = child_process._spares.pop((ChildCapture.__module__, child_process.adapter_module("rabbitmq")))
    process.stdin.close()  # what the parent's death does to its spare
    assert process.wait(10) == 0
    process.stdout.close()
