"""A take of a few letters goes into PostgreSQL as one INSERT, a batch of many as a binary COPY
(console.services.copy_insert): hostile bodies and headers come back exact either way, and so
do the audit events that name them."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from console.brokers import Received
from console.letters.envelope import FailureEnvelope
from console.models import AuditEvent, DeadLetter
from console.services.copy_insert import FEW_ROWS
from console.services.custody import store_captured
from tests.web.factory import XSS_SCRIPT, memory_place

pytestmark = pytest.mark.django_db

HOSTILE_BODIES = [b"\x00\x01\xff binary", b"'; DROP TABLE console_deadletter; --", XSS_SCRIPT.encode(),
                  "日本語 \\x00 %s %(name)s {}".encode(), b""]


def hostile(n: int) -> Received:
    headers = {"x-note": f"it's %s {n} \u2028 \\", "x-bytes": b"\x00\xfe", "x-when": datetime(2026, 1, 2, tzinfo=UTC),
               "x-amount": Decimal("1.50"), "x-nested": {"$bytes": "looks like our tag", "list": [1, None, "two"]}}
    envelope = FailureEnvelope(origin_queue="orders", reason="rejected", exception_type="ValueError",
                               exception_message=f"bad 'input' %d {n}", details={"n": n, "quote": "'\""})
    return Received(token=n, body=HOSTILE_BODIES[n % len(HOSTILE_BODIES)] + str(n).encode(), headers=headers,
                    properties={"message_id": f"m-{n}", "priority": 3}, envelope=envelope)


@pytest.mark.parametrize("count", [3, FEW_ROWS + 15], ids=["few (INSERT)", "many (COPY)"])
def test_hostile_letters_come_back_exact(memory_broker, count):
    place = memory_place(memory_broker)
    messages = [hostile(n) for n in range(count)]
    stored = store_captured(place, messages, job=None, actor="tests")
    assert len(stored.new) == count

    letters = DeadLetter.objects.in_bulk(stored.new)
    for letter_id, message in zip(stored.new, messages, strict=True):
        letter = letters[letter_id]
        assert letter.place_id == place.pk
        assert letter.body_bytes == message.body
        assert letter.exception_message == message.envelope.exception_message
        assert letter.headers["x-note"] == message.headers["x-note"]
    audited = AuditEvent.objects.filter(action="capture", place_name=place.name).latest("id")
    assert audited.letter_ids == sorted(stored.new) and audited.count == count
    assert audited.hash == audited.compute_hash()  # what was stored is what was hashed
