"""RabbitMQ's ``x-death`` header -> FailureEnvelope. A pure function, tested table by table.

``x-death`` is a list of tables, newest first, one per {queue, reason} the message died in:
``queue``, ``reason`` (rejected, expired, maxlen, delivery_limit), ``count``, ``time``,
``exchange``, ``routing-keys`` and, for per-message TTL, ``original-expiration``.
A repeat death in the same {queue, reason} only bumps ``count`` and moves the entry to the
front: ``time``, ``exchange`` and ``routing-keys`` keep their first values (RabbitMQ before
3.13 has no ``x-last-death-*`` headers).

The origin subscription is the queue the message failed in: the newest entry that is not an
``expired`` death in a retry/delay queue. In the "retry through a TTL queue" pattern the entries
are {A, rejected} and {A.retry, expired}; the origin is A, not A.retry.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import UTC, datetime
from typing import Any

from console.letters.envelope import FailureEnvelope

FIRST_DEATH_HEADERS = {
    "x-first-death-reason": "reason",
    "x-first-death-queue": "queue",
    "x-first-death-exchange": "exchange",
}


def envelope_from_headers(headers: Mapping[str, Any], *, retry_queues: Collection[str] = ()) -> FailureEnvelope:
    """Read where and why a message died from its headers.

    ``retry_queues`` names queues known (from discovery) to be retry/delay queues; without it,
    an ``expired`` entry counts as a retry hop when the queue has no other kind of death and
    the message had died elsewhere before it got there (so it arrived as a dead letter).
    A message without ``x-death`` (published into a DLQ by hand) gets reason ``unknown``.
    The entries themselves stay in the headers, not copied into the details.
    """
    details: dict[str, Any] = {}
    first_death = {field: headers[name] for name, field in FIRST_DEATH_HEADERS.items() if name in headers}
    if first_death:
        details["first_death"] = first_death
    if "x-delivery-count" in headers:  # quorum queues count every redelivery
        details["delivery_count"] = headers["x-delivery-count"]

    deaths = [entry for entry in _as_list(headers.get("x-death")) if isinstance(entry, Mapping)]
    if not deaths:
        return FailureEnvelope(reason="unknown", details=details)

    hops = [_is_retry_hop(index, deaths, retry_queues) for index in range(len(deaths))]
    # The newest entry that is not a retry hop; the oldest entry can only be a hop when the
    # caller named its queue, and then the newest entry is the best guess left.
    origin = next((entry for entry, hop in zip(deaths, hops, strict=True) if not hop), deaths[0])
    routing_keys = _as_list(origin.get("routing-keys"))
    times = [t for t in (_when(entry.get("time")) for entry in deaths) if t is not None]
    if any(hops):
        details["retry_queues"] = sorted({_text(entry.get("queue")) for entry, hop in zip(deaths, hops, strict=True)
                                          if hop})
    return FailureEnvelope(
        origin_address=_text(origin.get("exchange")),
        origin_queue=_text(origin.get("queue")),
        routing_key=_text(routing_keys[0]) if routing_keys else "",
        reason=_text(origin.get("reason")) or "unknown",
        death_count=_count(origin.get("count")),
        # Each entry's time is when the message first died there; later deaths in the same
        # {queue, reason} keep that time (before 3.13). So the newest time seen is only a lower
        # bound of the last failure, and the best the header can tell.
        first_failed_at=min(times) if times else None,
        last_failed_at=max(times) if times else None,
        details=details,
    )


def _is_retry_hop(index: int, deaths: list[Mapping[str, Any]], retry_queues: Collection[str]) -> bool:
    """Did the message only pass through this entry's queue on its way back (a delay)?"""
    entry = deaths[index]
    if _text(entry.get("reason")) != "expired":
        return False
    queue = _text(entry.get("queue"))
    if queue in retry_queues:
        return True
    # A queue where the message was also rejected or overflowed is a work queue, not a delay.
    if any(_text(other.get("queue")) == queue and _text(other.get("reason")) != "expired" for other in deaths):
        return False
    # Entries after this one died earlier: the message came into this queue as a dead letter.
    return any(_text(other.get("queue")) != queue for other in deaths[index + 1:])


def _as_list(value: Any) -> list[Any]:
    if isinstance(value, (list, tuple)):
        return list(value)
    return []


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8", "replace")
    return str(value)


def _count(value: Any) -> int:
    if isinstance(value, bool):
        return 1
    if isinstance(value, int):
        return value
    try:
        return int(_text(value))
    except ValueError:
        return 1


def _when(value: Any) -> datetime | None:
    """AMQP timestamps are seconds since the epoch; clients usually decode them to datetimes."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        seconds = value / 1000 if value > 0xFFFFFFFF else value  # a client that wrote milliseconds
        return datetime.fromtimestamp(seconds, tz=UTC)
    return None
