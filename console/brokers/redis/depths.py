"""The depths of many Redis dead places in one pipelined round trip.

A dead stream's depth is its length (XLEN, with TYPE to tell a missing key from an empty
stream). A group's depth is the number of its pending entries over the threshold and idle
``min_idle_ms``, what a capture would take: one page of XPENDING's extended form (IDLE
filter, ``page_size`` entries) answers it for every group whose pending list fits a page,
which is nearly all of them; only a group with a fuller page is walked further, a round trip
per further page (``places.over_threshold``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import redis  # the redis-py client library
from redis import exceptions as rx

from console.brokers.base import PlaceRef
from console.brokers.redis.connection import Options
from console.brokers.redis.entries import text
from console.brokers.redis.places import over_threshold


def depths(client: redis.Redis, places: Sequence[PlaceRef], options: Options) -> dict[PlaceRef, int | None]:
    """Depth of each place that exists (a missing stream or group is left out). The caller
    turns redis-py's errors into BrokerError (connection.translated_errors)."""
    if not places:
        return {}
    pipe = client.pipeline(transaction=False)
    for place in places:
        if place.scope:
            pipe.xpending_range(place.scope, place.name, "-", "+", options.page_size, idle=options.min_idle_ms)
        else:
            pipe.type(place.name)
            pipe.xlen(place.name)
    replies = iter(pipe.execute(raise_on_error=False))
    found: dict[PlaceRef, int | None] = {}
    for place in places:
        if place.scope:
            rows = _answer(next(replies))
            if isinstance(rows, rx.ResponseError):
                continue  # NOGROUP: the stream or its group is not there
            if len(rows) < options.page_size:
                found[place] = sum(1 for row in rows if int(row["times_delivered"]) > options.threshold)
            else:
                found[place] = sum(1 for _ in over_threshold(client, place.scope, place.name, options))
        else:
            kind, length = _answer(next(replies)), _answer(next(replies))
            if not isinstance(kind, Exception) and text(kind) == "stream":
                found[place] = int(length)
    return found


def _answer(reply: Any) -> Any:
    """A pipelined reply; a refusal of the key (NOGROUP, WRONGTYPE) is handed back to be judged,
    any other error raised for translated_errors to translate."""
    if isinstance(reply, rx.ResponseError) and not isinstance(reply, rx.NoPermissionError):
        return reply
    if isinstance(reply, Exception):
        raise reply
    return reply
