"""A capture that stored a batch and died before acking it: RabbitMQ hands the messages back
(redelivered), and the next capture neither stores them twice nor loses any."""

from __future__ import annotations

import pytest

from console.jobs.requests import request_job
from console.jobs.runner import run_job
from console.models import DeadLetter
from console.services.brokers import do_discover
from console.services.custody import store_captured

pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db]


def test_stored_but_unacked_messages_are_not_stored_twice(kit, rabbit_broker, operator, settings):
    settings.DLO_BATCH_SIZE = 3
    dlq = kit.queue(kit.name("crashy") + ".dlq")
    bodies = [f"letter {i}".encode() for i in range(7)]
    for body in bodies:
        kit.publish(dlq, body, message_id=body.decode())
    (place,) = [p for p in do_discover(rabbit_broker, actor=operator) if p.name == dlq]

    with rabbit_broker.adapter() as adapter:
        session = adapter.open_capture(place.ref, prefetch=3)
        batch = session.next_batch(3, wait_seconds=2.0)
        store_captured(place, batch, job=None, actor="worker that crashed")
        session.close()  # dies before the ack: the broker requeues the three
    kit.wait_depth(dlq, 7)
    assert DeadLetter.objects.filter(place=place).count() == 3

    job = request_job("capture", place=place, actor=operator, reason="capture again")
    assert run_job(job.pk) == "succeeded"

    letters = DeadLetter.objects.filter(place=place)
    assert sorted(letters.values_list("message_id", flat=True)) == [b.decode() for b in bodies]
    assert not letters.filter(pending_ack__isnull=False).exists()
    assert kit.depth(dlq) == 0
