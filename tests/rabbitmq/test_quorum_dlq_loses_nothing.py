"""A quorum-queue DLQ with a delivery limit: a console that peeked would count deliveries and
drop messages. Discovery and counting must leave every message where it is."""

from __future__ import annotations

import pytest

from console.brokers.base import PlaceRef

pytestmark = pytest.mark.rabbitmq


def test_discover_and_stats_leave_a_quorum_dlq_with_delivery_limit_untouched(kit, adapter):
    dlq = kit.queue(kit.name("ledger") + ".dlq", {"x-delivery-limit": 1}, quorum=True)
    bodies = [f"entry {i}".encode() for i in range(5)]
    for body in bodies:
        kit.publish(dlq, body, delivery_mode=2)
    before = adapter.stats(PlaceRef(dlq, "/")).depth

    for _ in range(3):  # a peek-based count would have dropped them after the second round
        (place,) = [p for p in adapter.discover() if p.name == dlq]
        assert place.details["type"] == "quorum"
        assert adapter.stats(place.ref).depth == 5

    assert before == adapter.stats(PlaceRef(dlq, "/")).depth == 5
    with adapter.open_capture(PlaceRef(dlq, "/"), prefetch=10) as session:
        batch = session.next_batch(10, wait_seconds=1.0)
        session.ack(batch)
    assert [m.body for m in batch] == bodies
    assert not any(m.redelivered for m in batch)
    assert kit.depth(dlq) == 0
