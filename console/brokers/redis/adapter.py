"""Redis Streams adapter (Redis 6.2 or later; tested on 7.0).

Connection string: ``redis://host:6379/0`` (``rediss://`` for TLS); the username and
password come from the broker's credentials, never from the URL.

Options (``BrokerConfig.options``, see ``connection.Options``): ``threshold`` (3): a pending
entry delivered more times than this is a letter; ``min_idle_ms`` (60000): how long an
entry must have sat untouched before the console takes it from its group;
``dead_stream_patterns`` ([]): extra globs naming dead streams; ``body_fields``
(body, payload, data); ``create_streams`` (false): whether a move may create a stream.

Dead places, two kinds:

* ``pending``: a consumer group, as ``PlaceRef(name=<group>, scope=<stream>)``. Redis has no
  dead-letter queue; the group's pending entries list counts deliveries, and entries over
  the threshold (and idle for ``min_idle_ms``) are its letters. Every group is listed.
* ``stream``: a dead stream, as ``PlaceRef(name=<stream>)`` with no scope: its name follows a
  convention (``*:dlq``, ``*.dlq``, ``*-dlq``, ``dlq:*``, ``*:dead``, ``dead:*``) or its first
  entry carries ``orig_stream`` and ``orig_id``, the fields of the common pattern (a worker
  XADDs the poison entry with ``orig_stream``, ``orig_id``, ``group``, ``deliveries``,
  ``error``, then XACKs it). An empty stream has no first entry: name it by convention.

A letter's origin (the replay's destination) is the stream its entry was first added to;
the group it failed in is kept in the envelope details and properties. Browsing is XRANGE,
a pure read, so ``can_peek_safely``. Capture and publish: see ``capture`` and ``publisher``;
the keeper's reader of many places over one connection: ``reader``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from console.brokers.base import (
    Adapter,
    BrokerConfig,
    BrokerError,
    CaptureSession,
    Outgoing,
    PlaceInfo,
    PlaceReader,
    PlaceRef,
    PublishResult,
    Received,
)
from console.brokers.redis import depths, places, publisher
from console.brokers.redis.capture import DeadStreamCapture, PendingCapture
from console.brokers.redis.connection import Options, connect, server_label, translated_errors
from console.brokers.redis.entries import dead_stream_received, pending_received, stream_entries, text
from console.brokers.redis.reader import RedisReader
from console.letters.policy import DeliveryPolicy, duration

MINIMUM_VERSION = (6, 2)  # XPENDING's IDLE filter


class RedisStreamsAdapter(Adapter):
    kind = "redis"
    label = "Redis Streams"
    url_example = "redis://host:6379/0"
    can_peek_safely = True
    can_move_server_side = False
    can_move_to_destination = True

    def __init__(self, config: BrokerConfig) -> None:
        super().__init__(config)
        self.options = Options.from_config(config.options)
        self.where = server_label(config.url)
        self.client = connect(config, self.options)

    def check(self) -> dict[str, Any]:
        with translated_errors(self.where):
            self.client.ping()
            info = self.client.info("server")
        version = str(info.get("redis_version", ""))
        parts = tuple(int(p) for p in version.split(".")[:2] if p.isdigit())
        if parts and parts < MINIMUM_VERSION:
            raise BrokerError(f"Redis {version} at {self.where} is too old: streams need 6.2 or later",
                              permanent=True)
        return {"version": version, "mode": str(info.get("redis_mode", ""))}

    def discover(self) -> list[PlaceInfo]:
        with translated_errors(self.where):
            return places.discover(self.client, self.options)

    def delivery_policy(self, origin: PlaceRef) -> DeliveryPolicy:
        """Redis limits no deliveries: the adapter's threshold decides what is a letter.

        The origin is a stream (``origin.name``); its dead places are its consumer groups'
        pending entries, ``(group, stream)``, as XINFO GROUPS tells them. A dead stream is no
        stream's dead place here: only its entries' ``orig_stream`` field (content) links it
        to an origin, and content never widens where someone may publish."""
        with translated_errors(self.where):
            groups = (self.client.xinfo_groups(origin.name)
                      if text(self.client.type(origin.name)) == "stream" else [])
        return DeliveryPolicy(
            told=True, max_deliveries=self.options.threshold,
            limit_by="the console's threshold: Redis counts deliveries but limits none",
            dead_place=f"the console takes it from the group's pending entries once idle "
                       f"{duration(self.options.min_idle_ms / 1000)}",
            dead_places=tuple((text(group["name"]), origin.name) for group in groups),
        )

    def stats(self, place: PlaceRef) -> PlaceInfo:
        with translated_errors(self.where):
            if place.scope:
                group = self._group(place)
                info = places.pending_place(self.client, place.scope, group, self.options)
                info.consumers = len(self.client.xinfo_consumers(place.scope, place.name))
                return info
            self._require_stream(place.name)
            first = stream_entries(self.client.xrange(place.name, count=1))
            head = (text(first[0][0]), first[0][1]) if first else None
            return places.dead_stream_place(self.client, place.name, "manual", head)

    def depths(self, places: Sequence[PlaceRef]) -> dict[PlaceRef, int | None]:
        """Every place's depth in one pipelined round trip (console.brokers.redis.depths): per
        dead stream TYPE and XLEN, per group one XPENDING page of idle entries; a group with
        more than a page of idle pending entries costs a round trip per further page."""
        with translated_errors(self.where):
            return depths.depths(self.client, places, self.options)

    def open_reader(self, *, per_place: int) -> PlaceReader:
        """A reader with a connection of its own (console.brokers.redis.reader): one XREAD
        over the dead streams, one pipelined XPENDING summary over the groups."""
        return RedisReader(self, connect(self.config, self.options), self.where, self.options,
                           per_place=per_place)

    def open_capture(self, place: PlaceRef, *, prefetch: int) -> CaptureSession:
        with translated_errors(self.where):
            if place.scope:
                self._group(place)
                return PendingCapture(self.client, self.where, place.scope, place.name, self.options)
            self._require_stream(place.name)
            return DeadStreamCapture(self.client, self.where, place.name, self.options)

    def peek(self, place: PlaceRef, limit: int) -> list[Received]:
        """The first ``limit`` letters, read with XPENDING and XRANGE only: nothing changes."""
        with translated_errors(self.where):
            if not place.scope:
                self._require_stream(place.name)
                return [dead_stream_received(place.name, text(i), fields, self.options.body_fields)
                        for i, fields in stream_entries(self.client.xrange(place.name, count=limit))]
            self._group(place)
            rows = []
            for row in places.over_threshold(self.client, place.scope, place.name, self.options):
                rows.append(row)
                if len(rows) >= limit:
                    break
            pipe = self.client.pipeline(transaction=False)
            for row in rows:
                pipe.xrange(place.scope, row["message_id"], row["message_id"])
            return [
                pending_received(place.scope, place.name, text(entries[0][0]), entries[0][1], row,
                                 self.options.body_fields)
                for row, entries in zip(rows, pipe.execute(), strict=True) if entries
            ]

    def publish(self, messages: Iterable[Outgoing], *, window: int) -> list[PublishResult]:
        return publisher.publish(self.client, self.where, messages, self.options, window)

    def close(self) -> None:
        self.client.close()

    def _require_stream(self, name: str) -> None:
        kind = text(self.client.type(name))
        if kind != "stream":
            raise BrokerError(f"no stream named {name!r} at {self.where}", permanent=True)

    def _group(self, place: PlaceRef) -> dict[str, Any]:
        self._require_stream(place.scope)
        for group in self.client.xinfo_groups(place.scope):
            if text(group["name"]) == place.name:
                return group
        raise BrokerError(f"stream {place.scope!r} has no consumer group {place.name!r}", permanent=True)

