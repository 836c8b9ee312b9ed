"""Each way a message dies in RabbitMQ 3.10, made to happen for real, and what the adapter's
capture reads from it: origin subscription, reason, count, failure times."""

from __future__ import annotations

import time

import pytest

from console.brokers.base import Outgoing, PlaceRef
from tests.rabbitmq.kit import PARK, REJECT, REQUEUE

pytestmark = pytest.mark.rabbitmq


def capture(adapter, queue: str, count: int):
    """Take ``count`` messages from a queue and ack them."""
    with adapter.open_capture(PlaceRef(queue, "/"), prefetch=10) as session:
        batch = session.next_batch(count, wait_seconds=5.0)
        session.ack(batch)
    assert len(batch) == count
    return batch


def work_queue(kit, base: str, **arguments):
    """A work queue whose dead letters go to ``<name>.dlq`` through the default exchange."""
    dlq = kit.queue(kit.name(base) + ".dlq")
    work = kit.queue(kit.name(base), {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq, **arguments})
    return work, dlq


def test_rejected_names_the_queue_the_exchange_and_the_routing_key(kit, adapter):
    work, dlq = work_queue(kit, "orders")
    shop = kit.exchange(kit.name("shop"), "direct")
    kit.bind(work, shop, "order.created")
    kit.publish("order.created", b'{"order": 1}', exchange=shop)
    kit.reject(work)
    kit.wait_depth(dlq, 1)

    (letter,) = capture(adapter, dlq, 1)
    envelope = letter.envelope
    assert (envelope.origin_queue, envelope.reason, envelope.death_count) == (work, "rejected", 1)
    assert (envelope.origin_address, envelope.routing_key) == (shop, "order.created")
    assert envelope.details["first_death"] == {"reason": "rejected", "queue": work, "exchange": shop}
    assert envelope.first_failed_at == envelope.last_failed_at is not None
    assert letter.body == b'{"order": 1}'


def test_a_message_that_expired_in_its_own_work_queue_has_that_origin_and_reason_expired(kit, adapter):
    work, dlq = work_queue(kit, "invoices")
    kit.publish(work, b"too late", expiration=0.05)  # 50 ms, and no consumer
    kit.wait_depth(dlq, 1)

    (letter,) = capture(adapter, dlq, 1)
    assert (letter.envelope.origin_queue, letter.envelope.reason, letter.envelope.death_count) == (work, "expired", 1)
    assert letter.headers["x-death"][0]["original-expiration"] == "50"


def test_maxlen_overflow_dead_letters_the_oldest_message(kit, adapter):
    work, dlq = work_queue(kit, "bounded", **{"x-max-length": 1})
    kit.publish(work, b"first")
    kit.publish(work, b"second")
    kit.wait_depth(dlq, 1)

    (letter,) = capture(adapter, dlq, 1)
    assert letter.body == b"first"
    assert (letter.envelope.origin_queue, letter.envelope.reason, letter.envelope.death_count) == (work, "maxlen", 1)


def test_quorum_delivery_limit_after_a_consumer_keeps_requeueing(kit, adapter):
    dlq = kit.queue(kit.name("payments") + ".dlq")
    work = kit.queue(kit.name("payments"), {
        "x-delivery-limit": 2, "x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq,
    }, quorum=True)
    kit.publish(work, b"poison")
    kit.consume(work, lambda message: REQUEUE, count=3)  # the first delivery and two redeliveries
    kit.wait_depth(dlq, 1)

    (letter,) = capture(adapter, dlq, 1)
    envelope = letter.envelope
    assert (envelope.origin_queue, envelope.reason, envelope.death_count) == (work, "delivery_limit", 1)
    assert kit.depth(work) == 0


def test_repeat_deaths_in_the_same_queue_grow_the_count_and_keep_the_first_time(kit, adapter):
    work, dlq = work_queue(kit, "shipping")
    kit.publish(work, b"parcel")
    kit.reject(work)
    kit.wait_depth(dlq, 1)
    (first,) = capture(adapter, dlq, 1)

    time.sleep(1.1)  # AMQP times are whole seconds: die again in a later second
    # Put it back the way a replay does, x-death and all, and let it fail again.
    (result,) = adapter.publish([Outgoing("again", work, first.body, first.headers, first.properties)], window=10)
    assert result.ok
    kit.reject(work)
    kit.wait_depth(dlq, 1)
    (second,) = capture(adapter, dlq, 1)

    assert (second.envelope.origin_queue, second.envelope.reason) == (work, "rejected")
    assert (first.envelope.death_count, second.envelope.death_count) == (1, 2)
    assert second.envelope.first_failed_at == first.envelope.first_failed_at
    assert second.headers["x-death"][0]["time"] == first.headers["x-death"][0]["time"]


def test_retry_through_a_ttl_queue_gives_the_work_queue_as_origin(kit, adapter):
    work = kit.name("emails")
    retry = kit.queue(work + ".retry", {"x-message-ttl": 20, "x-dead-letter-exchange": "",
                                        "x-dead-letter-routing-key": work})
    kit.queue(work, {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": retry})
    parking = kit.queue(work + ".dlq")
    kit.publish(work, b"welcome mail")

    def consumer(message):
        """Fails every time; after two trips through the retry queue, parks the message."""
        trips = [d for d in message.headers.get("x-death", []) if d["queue"] == retry]
        return (PARK, parking) if trips and trips[0]["count"] >= 2 else REJECT

    kit.consume(work, consumer, count=3)
    kit.wait_depth(parking, 1)

    (letter,) = capture(adapter, parking, 1)
    envelope = letter.envelope
    assert [(d["queue"], d["reason"]) for d in letter.headers["x-death"]] == [(retry, "expired"), (work, "rejected")]
    assert (envelope.origin_queue, envelope.reason, envelope.death_count) == (work, "rejected", 2)
    assert envelope.details["retry_queues"] == [retry]
