"""Finding dead places: consumer groups' pending entries, and dead streams.

Everything here only reads (SCAN, XINFO, XPENDING, XRANGE, XLEN): discovery and stats never
claim, acknowledge or deliver an entry, so they change no delivery count.
"""

from __future__ import annotations

from collections.abc import Iterator
from fnmatch import fnmatch
from typing import Any

import redis  # the redis-py client library
from redis import exceptions as rx

from console.brokers.base import PlaceInfo
from console.brokers.redis.connection import Options
from console.brokers.redis.entries import id_time, stream_entries, text

ORIGIN_SAMPLE = 100

#: A stream's first entry: its id, as text, and its fields.
Head = tuple[str, dict[bytes, bytes]]


def stream_names(client: redis.Redis) -> list[str]:
    """Every stream key. Names that are not UTF-8 are left out: a place name must be text."""
    names = []
    for raw in client.scan_iter(count=1000, _type="stream"):
        try:
            names.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            continue
    return sorted(names)


class PendingWalk:
    """A group's pending entries delivered more than ``threshold`` times, in id order.

    Pages through the pending entries list with XPENDING's extended form, each page starting
    after the last id seen, so it can be resumed between batches. ``idle`` applies the
    ``min_idle_ms`` filter; ``consumer`` keeps to the entries one consumer holds.
    """

    def __init__(self, client: redis.Redis, stream: str, group: str, options: Options, *,
                 consumer: str | None = None, idle: bool = True) -> None:
        self.client = client
        self.stream = stream
        self.group = group
        self.options = options
        self.consumer = consumer
        self.idle = options.min_idle_ms if idle else None
        self.cursor = "-"
        self.done = False

    def take(self, wanted: int) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        page = self.options.page_size
        while len(found) < wanted and not self.done:
            rows: list[dict[str, Any]] = self.client.xpending_range(self.stream, self.group, self.cursor, "+", page,
                                              consumername=self.consumer, idle=self.idle)
            self.done = len(rows) < page
            for index, row in enumerate(rows):
                self.cursor = "(" + text(row["message_id"])
                if int(row["times_delivered"]) > self.options.threshold:
                    found.append(row)
                    if len(found) == wanted:
                        self.done = self.done and index == len(rows) - 1
                        break
        return found


def over_threshold(client: redis.Redis, stream: str, group: str, options: Options) -> Iterator[dict[str, Any]]:
    """Every pending entry over the threshold and idle long enough: what a capture would take."""
    walk = PendingWalk(client, stream, group, options)
    while not walk.done:
        yield from walk.take(options.page_size)


def _is_dead_by_name(name: str, options: Options) -> bool:
    lowered = name.lower()
    return any(fnmatch(lowered, pattern.lower()) for pattern in options.all_dead_stream_patterns)


def _first_entries(client: redis.Redis, names: list[str]) -> dict[str, Head | None]:
    pipe = client.pipeline(transaction=False)
    for name in names:
        pipe.xrange(name, count=1)
    found = {}
    for name, entries in zip(names, pipe.execute(), strict=True):
        found[name] = (text(entries[0][0]), entries[0][1]) if entries else None
    return found


def _written_by_pattern(first: Head | None) -> bool:
    return first is not None and b"orig_stream" in first[1] and b"orig_id" in first[1]


def pending_place(client: redis.Redis, stream: str, group: dict[str, Any], options: Options) -> PlaceInfo:
    """A consumer group as a dead place: scope = the stream, name = the group."""
    name = text(group["name"])
    depth, oldest = 0, None
    if int(group["pending"]):
        for row in over_threshold(client, stream, name, options):
            depth += 1
            oldest = oldest or id_time(text(row["message_id"]))
    return PlaceInfo(
        name=name, scope=stream, kind="pending", discovered_by="group", origins=[stream], depth=depth,
        oldest_at=oldest, consumers=int(group["consumers"]),
        details={"pending": int(group["pending"]), "threshold": options.threshold,
                 "min_idle_ms": options.min_idle_ms},
    )


def dead_stream_place(client: redis.Redis, stream: str, by: str, first: Head | None) -> PlaceInfo:
    """A stream the common pattern writes letters to: scope empty, name = the stream."""
    sample = stream_entries(client.xrange(stream, count=ORIGIN_SAMPLE))
    origins = sorted({text(fields[b"orig_stream"]) for _, fields in sample if b"orig_stream" in fields})
    groups = client.xinfo_groups(stream)
    return PlaceInfo(
        name=stream, kind="stream", discovered_by=by, origins=origins, depth=client.xlen(stream),
        oldest_at=id_time(first[0]) if first else None,
        consumers=sum(int(g["consumers"]) for g in groups),
        details={"groups": [text(g["name"]) for g in groups]},
    )


def discover(client: redis.Redis, options: Options) -> list[PlaceInfo]:
    """Every consumer group (its over-threshold pending entries are its depth) and every dead stream.

    Every group is listed, even with nothing over the threshold, so a place does not vanish
    (and come back) each time a capture empties it.
    """
    names = stream_names(client)
    by_name = {name for name in names if _is_dead_by_name(name, options)}
    firsts = _first_entries(client, names)
    places = []
    for stream in names:
        try:
            for group in client.xinfo_groups(stream):
                places.append(pending_place(client, stream, group, options))
            if stream in by_name:
                places.append(dead_stream_place(client, stream, "convention", firsts[stream]))
            elif _written_by_pattern(firsts[stream]):
                places.append(dead_stream_place(client, stream, "content", firsts[stream]))
        except rx.ResponseError:
            continue  # deleted (or its group destroyed) while we looked: it is simply not there
    return places
