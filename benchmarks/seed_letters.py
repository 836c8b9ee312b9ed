"""Fast bulk insert of synthetic dead letters, for the page benchmarks.

Letters go straight in with PostgreSQL's COPY (a few seconds for 100,000), bypassing the
custody service and its audit on purpose: these are measurement fixtures, not custody. Each
letter looks like one a Spring or Celery consumer dead-lettered on RabbitMQ: an origin queue,
a reason, an exception with a message and a stack, x-death and tenant headers, and a JSON body
of a few hundred bytes. Fingerprints come from the real FailureEnvelope, over about 50 failure
groups of very different sizes (a few big ones, a long tail), spread over the last 30 days.

Use from Django code: ``seed_letters(place, 100_000)``; see benchmarks/pages.py.
"""

from __future__ import annotations

import hashlib
import json
import random
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import connection, transaction
from django.utils import timezone
from psycopg.types.json import Jsonb

from console.letters.envelope import FailureEnvelope
from console.models import DeadPlace, PlaceSample

ORIGINS = ["orders.billing", "orders.shipping", "payments.capture", "payments.refund",
           "inventory.reserve", "mail.send", "search.index", "audit.export"]
EXCEPTIONS = [
    ("java.lang.IllegalStateException", "Order {n} is already closed"),
    ("com.fasterxml.jackson.core.JsonParseException", "Unexpected character ('<' (code 60)) at line {n}"),
    ("java.net.SocketTimeoutException", "Read timed out after {n} ms"),
    ("org.springframework.dao.DataIntegrityViolationException",
     "duplicate key value violates unique constraint \"orders_pkey\" ({n})"),
    ("ValueError", "currency {n} is not supported"),
    ("KeyError", "'customer_{n}'"),
    ("", ""),  # no exception: rejected or expired by the broker itself
]
REASONS = ["rejected", "expired", "delivery_limit", "maxlen"]
TENANTS = [f"tenant-{i:02d}" for i in range(40)]
CURRENCIES = ["EUR", "USD", "JPY", "GBP", "CHF", "SEK"]
GROUPS = 50

COLUMNS = (
    "place_id", "broker_id", "state", "state_changed_at", "message_id", "custody_key",
    "captured_at", "origin_address", "origin_queue", "routing_key", "reason", "death_count",
    "first_failed_at", "last_failed_at", "exception_type", "exception_message", "exception_stack",
    "fingerprint", "envelope_details", "headers", "properties", "body", "body_size", "body_erased",
    "replay_id", "replayed_to", "replay_count", "quarantine_reason",
)


@dataclass(frozen=True)
class Group:
    """One way of failing: the envelope fields every letter of the group shares."""

    origin: str
    reason: str
    exception_type: str
    exception_message: str
    stack: str
    fingerprint: str


def failure_groups(rng: random.Random, count: int = GROUPS) -> list[Group]:
    groups = []
    for index in range(count):
        exc_type, template = EXCEPTIONS[index % len(EXCEPTIONS)]
        origin = ORIGINS[index % len(ORIGINS)]
        message = template.format(n=index) if template else ""
        handler = f"com.example.{origin.replace('.', '_')}.Handler.handle(Handler.java:{40 + index})"
        stack = (f"{exc_type}: {message}\n\tat {handler}\n"
                 "\tat org.springframework.amqp.rabbit.listener.AbstractMessageListenerContainer"
                 ".invoke(AMLC.java:1554)"
                 if exc_type else "")
        reason = "rejected" if exc_type else REASONS[1 + index % 3]
        envelope = FailureEnvelope(origin_queue=origin, reason=reason, exception_type=exc_type,
                                   exception_message=message, exception_stack=stack)
        groups.append(Group(origin, reason, exc_type, message, stack, envelope.fingerprint()))
    return groups


def _row(place: DeadPlace, group: Group, rng: random.Random, captured_at: datetime, serial: int) -> tuple:
    order = 100_000 + serial
    body = json.dumps({
        "order_id": order,
        "customer": {"id": f"c-{rng.randrange(10_000)}", "tier": rng.choice(["gold", "silver", "basic"])},
        "currency": rng.choice(CURRENCIES),
        "lines": [{"sku": f"SKU-{rng.randrange(5000):05d}", "qty": rng.randrange(1, 5),
                   "price": round(rng.uniform(1, 300), 2)} for _ in range(rng.randrange(1, 6))],
        "note": rng.choice(["", "gift wrap", "leave at the door", "call before delivery"]),
    }).encode()
    died = captured_at - timedelta(seconds=rng.randrange(1, 600))
    death_count = rng.randrange(1, 6)
    headers = {
        "content-type": "application/json",
        "tenant": rng.choice(TENANTS),
        "trace-id": uuid.UUID(int=rng.getrandbits(128)).hex,
        "x-first-death-queue": group.origin,
        "x-first-death-reason": group.reason,
        "x-death": [{"queue": group.origin, "reason": group.reason, "count": death_count,
                     "exchange": "orders", "routing-keys": [group.origin]}],
    }
    if group.exception_type:
        headers["x-exception-fqcn"] = group.exception_type
        headers["x-exception-message"] = group.exception_message
    message_id = f"msg-{serial}"
    key = hashlib.sha256(message_id.encode() + body).hexdigest()
    return (
        place.pk, place.broker_id, "held", captured_at, message_id, key,
        captured_at, "orders", group.origin, group.origin, group.reason, death_count,
        died, died, group.exception_type, group.exception_message, group.stack,
        group.fingerprint, Jsonb({}), Jsonb(headers), Jsonb({"message_id": message_id, "delivery_mode": 2}),
        body, len(body), False, "", "", 0, "",
    )


def seed_letters(place: DeadPlace, count: int, *, days: int = 30, seed: int = 7, batch: int = 10_000,
                 analyze: bool = True) -> None:
    """Insert ``count`` held letters into ``place`` with COPY, in batches of ``batch`` rows
    (then ANALYZE the letters, unless not ``analyze``).

    Group sizes follow a steep curve (group k gets a share proportional to 1/(k+1)), and
    capture times are spread evenly over the last ``days`` days, so charts have a shape.
    """
    rng = random.Random(seed)
    groups = failure_groups(rng)
    weights = [1 / (k + 1) for k in range(len(groups))]
    now = timezone.now()
    span = timedelta(days=days).total_seconds()
    sql = f"COPY console_deadletter ({', '.join(COLUMNS)}) FROM STDIN"
    serial_base = rng.randrange(10**9)
    for start in range(0, count, batch):
        with transaction.atomic(), connection.cursor() as cursor:
            with cursor.cursor.copy(sql) as copy:
                for serial in range(start, min(start + batch, count)):
                    group = rng.choices(groups, weights)[0]
                    captured_at = now - timedelta(seconds=span * (1 - serial / count))
                    copy.write_row(_row(place, group, rng, captured_at, serial_base + serial))
    if analyze:
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE console_deadletter")


def seed_samples(place: DeadPlace, *, hours: int = 24, every_minutes: int = 1, seed: int = 7) -> int:
    """One PlaceSample per ``every_minutes`` over the last ``hours``, as beat would have written."""
    rng = random.Random(seed)
    now = timezone.now()
    depth, samples = 200, []
    for step in range(hours * 60 // every_minutes, 0, -1):
        arrivals = max(0, int(rng.gauss(3, 2)))
        depth = max(0, depth + arrivals - rng.randrange(0, 5))
        samples.append(PlaceSample(place=place, at=now - timedelta(minutes=step * every_minutes),
                                   depth=depth, held=depth, arrivals=arrivals))
    PlaceSample.objects.bulk_create(samples, batch_size=2000)
    return len(samples)
