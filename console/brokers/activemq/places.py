"""Finding and browsing dead places over STOMP, which has no way to list queues.

A browse is a SUBSCRIBE with ``browser:true``: ActiveMQ sends copies of the queue's messages
and then a MESSAGE with ``browser:end``; nothing is consumed, acknowledged or redelivered.
Two costs show through: browsing a queue that does not exist makes ActiveMQ create it
(empty), and counting means reading every message, so a count stops at the ``count_limit``
option (10,000) and such a depth is a lower bound (``details.depth_is_lower_bound``).
ActiveMQ itself may end a browse of a very large queue early (it pages a browser through
memory); a depth is what the browse saw.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from console.brokers.activemq.connection import Options, StompLink
from console.brokers.activemq.messages import destination_of, epoch_ms, origin_name
from console.brokers.base import BrokerError, PlaceInfo

SHARED_DLQ = "ActiveMQ.DLQ"
INDIVIDUAL_PREFIX = "ActiveMQ.DLQ.Queue."


def browse(link: StompLink, place: str, options: Options, *, limit: int | None = None) -> Iterator[Any]:
    """The queue's messages in order, as MESSAGE frames, without consuming any."""
    sub = link.subscribe(destination_of(place), {"browser": "true", "ack": "auto"})
    seen = 0
    try:
        while limit is None or seen < limit:
            frame = link.next_message(sub, options.browse_timeout)
            if frame is None:
                raise BrokerError(f"ActiveMQ at {link.where} stopped sending {place} while browsing it")
            if frame.headers.get("browser") == "end":
                return
            seen += 1
            yield frame
    finally:
        if link.alive:
            link.unsubscribe(sub)


@dataclass
class Survey:
    """What one browse of a place found."""

    depth: int = 0
    stopped_at_limit: bool = False
    oldest_at: datetime | None = None
    origins: set[str] = field(default_factory=set)


def survey(link: StompLink, place: str, options: Options) -> Survey:
    found = Survey()
    for frame in browse(link, place, options, limit=options.count_limit):
        found.depth += 1
        published = epoch_ms(frame.headers.get("timestamp"))
        if published and (found.oldest_at is None or published < found.oldest_at):
            found.oldest_at = published
        destination = frame.headers.get("original-destination")
        if destination:
            found.origins.add(origin_name(destination))
    found.stopped_at_limit = found.depth >= options.count_limit
    return found


def candidates(options: Options) -> dict[str, str]:
    """Place name -> how we came to it: the shared DLQ, the configured names, and the
    individual DLQs the conventions give each known queue."""
    names = {SHARED_DLQ: "convention"}
    for queue in options.known_queues:
        for prefix in (INDIVIDUAL_PREFIX, *options.prefixes):
            names.setdefault(prefix + queue, "convention")
    for name in options.dead_places:
        names[name] = "configured"
    return names


def place_info(name: str, by: str, found: Survey) -> PlaceInfo:
    return PlaceInfo(
        name=name, kind="queue", discovered_by=by, origins=sorted(found.origins), depth=found.depth,
        oldest_at=found.oldest_at,
        details={"counted_by": "browse", "depth_is_lower_bound": found.stopped_at_limit},
    )


def discover(link: StompLink, options: Options) -> list[PlaceInfo]:
    """The shared DLQ and every configured place, even empty (so a place does not vanish each
    time a capture empties it), and every conventional candidate with letters in it."""
    places = []
    for name, by in candidates(options).items():
        found = survey(link, name, options)
        if found.depth or by == "configured" or name == SHARED_DLQ:
            places.append(place_info(name, by, found))
    return places
