"""A capture that stored a batch and died before acking it: RabbitMQ hands the messages back
(redelivered), and the next capture neither stores them twice nor loses any."""

from __future__ import annotations

from collections import Counter

import pytest

from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import DeadLetter
from console.services.brokers import do_add_broker, do_discover
from console.services.custody import store_captured
from tests.rabbitmq.kit import MANAGEMENT_URL, PASSWORD, USER, AckDroppingProxy

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


def test_an_acknowledgement_the_broker_never_took_leaves_nothing_stored_twice(kit, operator, settings):
    """The broker goes away with the capture's first acknowledgement written but never taken:
    the capture does not count it as taken, so when the messages come back (redelivered) they
    match their committed copies instead of being stored again."""
    settings.DLO_BATCH_SIZE = 4
    dlq = kit.queue(kit.name("ack-lost") + ".dlq")
    for n in range(12):
        kit.publish(dlq, f"letter {n}".encode(), message_id=f"m{n}")
    proxy = AckDroppingProxy(kit)
    try:
        broker = do_add_broker(actor="tests", name=f"ack-lost-{kit.suffix}", kind="rabbitmq",
                               url=f"amqp://{USER}:{PASSWORD}@127.0.0.1:{proxy.port}/%2F",
                               management_url=MANAGEMENT_URL)
        (place,) = [p for p in do_discover(broker, actor=operator) if p.name == dlq]
        job = request_job("capture", place=place, actor=operator, reason="the broker drops an ack")
        assert run_job(job.pk) == "succeeded"
    finally:
        proxy.close()

    assert proxy.dropped == 1, "the first acknowledgement never reached the broker"
    stored = Counter(DeadLetter.objects.filter(place=place).values_list("message_id", flat=True))
    assert stored == Counter({f"m{n}": 1 for n in range(12)}), "each message in custody once"
    assert not DeadLetter.objects.filter(place=place, pending_ack__isnull=False).exists()
    assert kit.depth(dlq) == 0
