"""Reading x-death headers, table by table (pure: no broker; the real deaths are in
test_xdeath_cases.py)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from console.brokers.rabbitmq.xdeath import envelope_from_headers

T1 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
T2 = datetime(2026, 1, 2, 3, 4, 9, tzinfo=UTC)


def death(queue, reason, count=1, time=T1, exchange="", keys=None):
    return {"queue": queue, "reason": reason, "count": count, "time": time, "exchange": exchange,
            "routing-keys": keys if keys is not None else [queue]}


@pytest.mark.parametrize("deaths, origin, reason, count", [
    ([death("A", "rejected")], "A", "rejected", 1),
    ([death("W", "expired")], "W", "expired", 1),
    ([death("A", "maxlen", 3)], "A", "maxlen", 3),
    ([death("Q", "delivery_limit")], "Q", "delivery_limit", 1),
    # retry through a TTL queue: the delay's expiry is a hop, the work queue is the origin
    ([death("A.retry", "expired", 2, T2), death("A", "rejected", 2)], "A", "rejected", 2),
    # after coming back from the delay it expired in the work queue itself: that is its death
    ([death("A", "expired", 1, T2), death("A.retry", "expired"), death("A", "rejected")], "A", "expired", 1),
    # rejected in A, then moved on and rejected again in B: the newest death wins
    ([death("B", "rejected", 1, T2), death("A", "rejected")], "B", "rejected", 1),
], ids=["rejected", "expired", "maxlen", "delivery_limit", "retry-loop", "expired-after-retry", "newest"])
def test_origin_reason_and_count(deaths, origin, reason, count):
    envelope = envelope_from_headers({"x-death": deaths})
    assert (envelope.origin_queue, envelope.reason, envelope.death_count) == (origin, reason, count)


def test_first_and_last_failure_span_every_entry():
    envelope = envelope_from_headers({"x-death": [death("A.retry", "expired", 2, T2), death("A", "rejected", 2, T1)]})
    assert (envelope.first_failed_at, envelope.last_failed_at) == (T1, T2)


def test_a_message_published_into_a_dlq_by_hand_has_no_origin():
    envelope = envelope_from_headers({"app": "x"})
    assert (envelope.origin_queue, envelope.reason, envelope.death_count) == ("", "unknown", 0)


def test_queues_named_as_retry_queues_are_hops_even_without_history():
    deaths = [death("delay-5s", "expired"), death("orders", "rejected")]
    assert envelope_from_headers({"x-death": deaths}, retry_queues={"delay-5s"}).origin_queue == "orders"
    only = [death("delay-5s", "expired")]
    assert envelope_from_headers({"x-death": only}, retry_queues={"delay-5s"}).origin_queue == "delay-5s"


def test_hostile_values_are_read_not_trusted():
    deaths = [{"queue": b"q\xff", "reason": b"rejected", "count": "7", "time": 1767323045,
               "exchange": None, "routing-keys": "not-a-list"}, "garbage"]
    envelope = envelope_from_headers({"x-death": deaths, "x-delivery-count": 4, "x-first-death-queue": "q"})
    assert (envelope.origin_queue, envelope.reason, envelope.death_count) == ("q\ufffd", "rejected", 7)
    assert envelope.routing_key == "" and envelope.origin_address == ""
    assert envelope.first_failed_at == datetime.fromtimestamp(1767323045, tz=UTC)
    assert envelope.details["delivery_count"] == 4
    assert envelope.details["first_death"] == {"queue": "q"}
