"""A replay of many letters publishes through a child process (console.brokers.publish_process).
Whatever happens to that process, nothing is lost: a publisher killed mid-replay is replaced and
every letter still reaches its origin queue, byte for byte, under its own replay id; a
publisher whose parent is gone exits; the broker's refusals reach the job as they would in
process."""

from __future__ import annotations

import os
import signal

import pytest

from console.brokers import BrokerError
from console.brokers.publication import Publication
from console.brokers.publish_process import ChildPublisher
from console.jobs.door.requests import request_job
from console.jobs.engines.senders import CHILD_FROM
from console.letters.rows import REPLAY_ID_HEADER
from console.models import Job
from console.services.brokers import do_discover
from tests.flow import JobThread, capture
from tests.rabbitmq.conftest import rabbit_config
from tests.rabbitmq.crash import (
    assert_replayed,
    dead_letter_numbered,
    dead_queue,
    numbered,
)
from tests.workers import publishers_of

pytestmark = pytest.mark.rabbitmq


@pytest.mark.django_db(transaction=True)
def test_a_publisher_killed_mid_replay_is_replaced_and_nothing_is_lost(kit, rabbit_broker, operator, settings):
    settings.DLO_BATCH_SIZE = 100
    count = 3000
    assert count >= CHILD_FROM
    work, dlq = dead_queue(kit)
    dead_letter_numbered(kit, work, dlq, 0, count)
    (place,) = [p for p in do_discover(rabbit_broker, actor=operator) if p.name == dlq]
    assert capture(place, operator).status == Job.Status.SUCCEEDED
    job = request_job("replay", actor=operator, reason="publisher killed", filter={"place": place.pk})

    runner = JobThread(job.pk)
    runner.start()
    try:
        kit.wait_for(lambda: publishers_of(os.getpid()), "the replay's publisher process")
        (publisher,) = publishers_of(os.getpid())
        kit.wait_for(lambda: Job.objects.get(pk=job.pk).done >= 300, "the first batches confirmed")
        os.kill(publisher, signal.SIGKILL)
    finally:
        runner.join(120)

    job.refresh_from_db()
    assert runner.outcome == [Job.Status.SUCCEEDED], job.error
    assert job.done == count
    taken = kit.drain(work)
    arrived = [(m.message_id, m.headers.get(REPLAY_ID_HEADER)) for m in taken]
    # What the dead publisher had sent but not seen confirmed goes again: two batches at most.
    assert_replayed(place, arrived, allowed_duplicates=2 * settings.DLO_BATCH_SIZE, explain=lambda problem: problem)
    sent = {properties["message_id"]: body for body, properties in numbered(0, count)}
    assert all(m.body == sent[m.message_id] for m in taken), "every copy is its letter's body, byte for byte"
    assert not publishers_of(os.getpid()), "the replacement publisher exits with the replay"


def test_a_publisher_whose_parent_is_gone_exits(kit):
    publisher = ChildPublisher(rabbit_config(), subject="test")
    queue = kit.queue(kit.name("orphan-publisher"))
    results = publisher.publish([Publication(1, queue, "", b"\x00\xffbody", '{"h": {"$bytes": "AAE="}}', "{}", "r1")],
                                window=10)
    assert [(r.key, r.ok) for r in results] == [(1, True)]
    (message,) = kit.drain(queue)
    assert message.body == b"\x00\xffbody" and message.headers["h"] == b"\x00\x01"
    assert message.headers["x-dlo-replay-id"] == "r1"

    process = publisher._process
    process.stdin.close()  # what the parent's death does to the publisher's commands
    assert process.wait(10) == 0
    process.stdout.close()


def test_the_broker_refusing_the_publisher_reaches_the_parent_as_it_is(kit):
    config = rabbit_config()
    unreachable = type(config)(**{**config.__dict__, "url": "amqp://guest:guest@127.0.0.1:1/%2F"})
    publisher = ChildPublisher(unreachable, subject="nowhere")
    try:
        with pytest.raises(BrokerError) as refused:
            publisher.publish([Publication(1, "q", "", b"x", "{}", "{}", "r1")], window=10)
        assert not refused.value.permanent
    finally:
        publisher.close()


@pytest.mark.django_db(transaction=True)
def test_batches_pipelined_through_the_publisher_arrive_in_the_order_of_the_letters(kit, rabbit_broker, operator,
                                                                                   settings):
    """The next batch goes out while the one before waits for its confirms: still one after the
    other, so the origin queue receives the letters in the order they were captured."""
    settings.DLO_BATCH_SIZE = 50
    count = 1200
    work, dlq = dead_queue(kit)
    dead_letter_numbered(kit, work, dlq, 0, count)
    (place,) = [p for p in do_discover(rabbit_broker, actor=operator) if p.name == dlq]
    assert capture(place, operator).status == Job.Status.SUCCEEDED
    job = request_job("replay", actor=operator, reason="in order", filter={"place": place.pk})

    runner = JobThread(job.pk)
    runner.start()
    kit.wait_for(lambda: publishers_of(os.getpid()), "the replay's publisher process")
    runner.join(120)

    assert runner.outcome == [Job.Status.SUCCEEDED]
    assert [m.message_id for m in kit.drain(work)] == [properties["message_id"] for _, properties in numbered(0, count)]
