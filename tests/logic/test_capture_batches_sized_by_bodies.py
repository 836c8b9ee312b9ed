"""A capture takes large messages a few at a time and small ones DLO_BATCH_SIZE at a time: each
batch (one transaction, one audit event) holds about DLO_BATCH_BYTES of bodies. On the
in-memory broker, with real PostgreSQL underneath."""

from __future__ import annotations

import pytest

from console.brokers.batch_sizing import FIRST_BATCH
from console.brokers.memory.adapter import Message
from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import AuditEvent, DeadLetter
from console.services.brokers import do_discover

pytestmark = pytest.mark.django_db

KIB = 1024


def _capture(memory_broker, operator, bodies: list[bytes]) -> list[int]:
    """Capture ``bodies`` from a dead place; the letters each batch stored, in order."""
    fake, broker = memory_broker
    fake.queue("orders")
    for n, body in enumerate(bodies):
        fake.queue("orders.dlq").append(Message(body, {"x-origin-queue": "orders"}, {"message_id": f"m{n}"}))
    (place,) = do_discover(broker, actor=operator)
    job = request_job("capture", place=place, actor=operator, reason="triage")
    assert run_job(job.pk) == "succeeded"
    assert list(DeadLetter.objects.order_by("id").values_list("body", flat=True)) == bodies
    assert len(fake.queue("orders.dlq")) == 0
    return [event.count for event in AuditEvent.objects.filter(job_id=job.pk, action="capture").order_by("id")]


def test_large_bodies_are_taken_a_few_at_a_time(memory_broker, operator, settings):
    settings.DLO_BATCH_SIZE, settings.DLO_BATCH_BYTES = 1000, 256 * KIB
    batches = _capture(memory_broker, operator, [bytes([n]) * 100 * KIB for n in range(30)])
    # The first batch knows nothing of the sizes; after it, 256 KiB hold two bodies of 100 KiB.
    assert batches == [FIRST_BATCH] + [2] * 11


def test_small_bodies_fill_whole_batches(memory_broker, operator, settings):
    settings.DLO_BATCH_SIZE, settings.DLO_BATCH_BYTES = 50, 256 * KIB
    batches = _capture(memory_broker, operator, [f"order {n}".encode() for n in range(300)])
    assert batches == [FIRST_BATCH, 50, 50, 50, 50, 50, 50 - FIRST_BATCH]


def test_the_batch_follows_the_sizes_along_the_queue(memory_broker, operator, settings):
    settings.DLO_BATCH_SIZE, settings.DLO_BATCH_BYTES = 100, 64 * KIB
    small, large = b"s" * 100, b"L" * 32 * KIB
    batches = _capture(memory_broker, operator, [small] * 108 + [large] * 150 + [small] * 300)
    # A batch of 100 that turned out large makes the next ones two bodies of 32 KiB; the first
    # batch of small ones after them makes them 100 again.
    assert batches == [FIRST_BATCH, 100, 100] + [2] * 25 + [2, 100, 100, 98]
