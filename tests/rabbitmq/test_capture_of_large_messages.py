"""A capture of large messages holds a few of them at a time, not three batches' worth: RabbitMQ
sends ahead only three of the (byte-sized) batches the capture asks for, so the reader and the
worker stay small whatever the messages weigh, and every message is stored once, exactly."""

from __future__ import annotations

import os

import aio_pika
import pytest

from console.jobs.door.requests import request_job
from console.models import DeadLetter, Job
from console.services.brokers import do_discover
from tests.flow import JobThread

pytestmark = pytest.mark.rabbitmq

MIB = 1024 * 1024


@pytest.mark.django_db(transaction=True)
def test_large_messages_are_taken_a_few_at_a_time(kit, rabbit_broker, operator, settings):
    settings.DLO_BATCH_SIZE, settings.DLO_BATCH_BYTES = 1000, 2 * MIB
    count = 100
    bodies = {f"m{n}": os.urandom(MIB) for n in range(count)}
    dlq = kit.queue(kit.name("large") + ".dlq")
    kit.publish_many(dlq, [aio_pika.Message(body, message_id=key) for key, body in bodies.items()], window=20)
    kit.wait_depth(dlq, count)
    (place,) = [p for p in do_discover(rabbit_broker, actor=operator) if p.name == dlq]
    job = request_job("capture", place=place, actor=operator, reason="large messages")

    runner = JobThread(job.pk)
    runner.start()
    in_flight: list[int] = []
    try:
        while runner.is_alive():
            stored = DeadLetter.objects.filter(place=place).count()
            ready = kit.depth(dlq)  # after the count, so this is at least what the console holds unstored
            if stored >= 30:
                in_flight.append(count - stored - ready)
    finally:
        runner.join(120)

    assert runner.outcome == [Job.Status.SUCCEEDED], Job.objects.get(pk=job.pk).error
    stored = dict(DeadLetter.objects.filter(place=place).values_list("message_id", "body"))
    assert stored.keys() == bodies.keys() and all(bytes(stored[key]) == body for key, body in bodies.items())
    assert kit.depth(dlq) == 0
    # Batches of two 1 MiB bodies, three of them sent ahead, the one being stored: once the
    # capture is under way, no more than that (and a batch stored meanwhile) is in flight.
    # Before, RabbitMQ sent all 100 ahead at once.
    assert in_flight, "the capture was sampled under way"
    assert max(in_flight) <= 12, in_flight
