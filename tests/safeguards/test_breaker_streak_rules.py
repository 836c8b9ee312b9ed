"""What makes a streak "in a row" when the console sees only failures (console.services.safeguards):
letters from one origin count until a quiet gap longer than DLO_BREAKER_RESET_SECONDS; ten with
any exceptions open the breaker; a letter without an exception type ends a same-exception run;
origins are counted apart, in the order their letters arrive within one batch."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from console.brokers import Received
from console.letters.envelope import FailureEnvelope
from console.models import AuditEvent, Origin
from console.services.custody import store_captured
from tests.web.factory import memory_place

pytestmark = pytest.mark.django_db

START = datetime(2026, 11, 23, 9, 0, tzinfo=UTC)


def arrival(origin: str, exception: str, minute: float) -> Received:
    envelope = FailureEnvelope(origin_queue=origin, reason="rejected", exception_type=exception,
                               last_failed_at=START + timedelta(minutes=minute))
    return Received(token=None, body=b"{}", headers={}, properties={}, envelope=envelope)


def store(place, *arrivals: Received) -> None:
    store_captured(place, list(arrivals), job=None, actor="tests")


def test_a_quiet_gap_starts_a_new_streak(memory_broker, settings):
    settings.DLO_BREAKER_RESET_SECONDS = 600
    place = memory_place(memory_broker)
    store(place, arrival("orders", "Timeout", 0), arrival("orders", "Timeout", 1))
    store(place, arrival("orders", "Timeout", 12))  # 11 minutes later: the consumer was working
    origin = Origin.objects.get(name="orders")
    assert (origin.streak_same, origin.streak_any, origin.breaker_open) == (1, 1, False)
    store(place, arrival("orders", "Timeout", 13), arrival("orders", "Timeout", 14))
    assert Origin.objects.get(name="orders").breaker_open


def test_ten_in_a_row_with_any_exception_open_the_breaker_and_origins_count_apart(memory_broker, settings):
    settings.DLO_BREAKER_ANY = 10
    place = memory_place(memory_broker)
    mixed = [arrival("orders", ["A", "B", ""][n % 3], n / 10) for n in range(9)]
    store(place, *mixed[:5], arrival("payments", "A", 0), *mixed[5:])
    orders = Origin.objects.get(name="orders")
    assert (orders.streak_any, orders.streak_same, orders.breaker_open) == (9, 0, False)
    assert Origin.objects.get(name="payments").streak_any == 1
    store(place, arrival("orders", "B", 1))
    orders.refresh_from_db()
    assert orders.breaker_open and orders.breaker_reason.startswith("10 letters in a row failed")
    assert AuditEvent.objects.filter(action="breaker_open").count() == 1
