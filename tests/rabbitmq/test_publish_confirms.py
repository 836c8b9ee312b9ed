"""Publishing through the default exchange with mandatory and confirms, in windows: results in
input order, returns paired with the right message, properties and headers exactly as given."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from console.brokers.base import Outgoing, PlaceRef

pytestmark = pytest.mark.rabbitmq


def test_each_result_matches_its_message_across_windows(kit, adapter):
    target = kit.queue(kit.name("target"))
    missing = kit.name("missing")
    outgoing = [
        Outgoing(0, target, b"same", {"n": 0}, {}),
        Outgoing(1, missing, b"same", {"n": 1}, {}),  # same body and (absent) message id as 0 and 2
        Outgoing(2, target, b"same", {"n": 2}, {}),
        Outgoing(3, missing, b"other", {}, {"message_id": "x"}),
        Outgoing(4, target, b"last", {}, {"message_id": "x"}),
    ]
    results = adapter.publish(outgoing, window=2)

    assert [(r.key, r.ok) for r in results] == [(0, True), (1, False), (2, True), (3, False), (4, True)]
    assert results[1].error == f"no queue {missing!r} on vhost '/'"
    delivered = kit.drain(target)
    assert [(m.body, m.headers.get("n")) for m in delivered] == [(b"same", 0), (b"same", 2), (b"last", None)]
    assert [m.message_id for m in delivered] == [None, None, "x"]  # no id invented for the first two


def test_properties_and_typed_headers_leave_exactly_as_given(kit, adapter):
    target = kit.queue(kit.name("typed"))
    sent_at = datetime(2026, 3, 4, 5, 6, 7, tzinfo=UTC)
    headers = {
        "when": sent_at, "amount": Decimal("12.50"), "attempt": 3, "flag": True, "nothing": None,
        "nested": {"list": [1, "two", b"\x03"]}, "raw": b"\x00\xff",
    }
    properties = {
        "content_type": "application/json", "content_encoding": "utf-8", "delivery_mode": 2, "priority": 4,
        "correlation_id": "c-1", "reply_to": "replies", "expiration": "600000", "message_id": "m-1",
        "timestamp": sent_at, "type": "order.created", "user_id": "guest", "app_id": "shop",
    }
    (result,) = adapter.publish([Outgoing("k", target, b"{}", headers, properties)], window=10)
    assert result.ok

    with adapter.open_capture(PlaceRef(target, "/"), prefetch=1) as session:
        (message,) = session.next_batch(1, wait_seconds=2.0)
        session.ack([message])
    assert message.properties == properties
    assert message.headers == headers


def test_a_foreign_user_id_is_refused_without_breaking_the_window(kit, adapter):
    target = kit.queue(kit.name("users"))
    results = adapter.publish([
        Outgoing("a", target, b"1", {}, {"user_id": "mallory"}),
        Outgoing("b", target, b"2", {}, {}),
    ], window=10)
    assert [r.ok for r in results] == [False, True]
    assert "user_id 'mallory'" in results[0].error
    assert [m.body for m in kit.drain(target)] == [b"2"]



def test_a_header_amqp_cannot_carry_is_refused_without_breaking_the_window(kit, adapter):
    """An integer wider than 64 bits (JSON allows it; an edited letter may hold one) cannot be
    written as an AMQP field value: that letter is refused, the others go out."""
    target = kit.queue(kit.name("wide"))
    results = adapter.publish([
        Outgoing("a", target, b"1", {"n": 1}, {}),
        Outgoing("b", target, b"2", {"n": 2 ** 64}, {}),
        Outgoing("c", target, b"3", {"n": 3}, {}),
    ], window=10)
    assert [r.ok for r in results] == [True, False, True]
    assert results[1].error == ("its properties cannot be encoded: n error: "
                                "Unsupported numeric value: 18446744073709551616")
    assert [(m.body, m.headers) for m in kit.drain(target)] == [(b"1", {"n": 1}), (b"3", {"n": 3})]
