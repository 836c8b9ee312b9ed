"""Capture sessions: pending entries of a group, or the entries of a dead stream.

Pending entries are claimed by the console's own consumer (``dlo-console``) before they are
read, with XCLAIM ... JUSTID, which succeeds only if the entry is still idle for
``min_idle_ms`` (a worker retrying it at that moment keeps it) and leaves the delivery count
as it was. ``ack`` is XACK, and only XACK: the entry stays in the stream, which other groups
may still need; it just leaves this group's pending list. Closing hands nothing back because
nothing left the broker: unacknowledged entries stay pending (held by the console's
consumer) and the next capture takes them first. Closing also removes the console's consumer
from the group once it holds nothing, so it does not linger in XINFO CONSUMERS.

A dead stream is read in id order with XRANGE; ``ack`` is XDEL of the committed ids.
Each ack is one command over all ids of the batch, so it is atomic.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, cast

import redis  # the redis-py client library
from redis.typing import StreamIdT

from console.brokers.base import BrokerError, CaptureSession, Received
from console.brokers.redis.connection import Options, translated_errors
from console.brokers.redis.entries import dead_stream_received, pending_received, stream_entries, text
from console.brokers.redis.places import PendingWalk

log = logging.getLogger(__name__)

# Drop the console's consumer from the group once it holds nothing (DELCONSUMER would
# discard its pending entries, so check and delete in one step).
_FORGET_CONSUMER = """
local held = redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', 1, ARGV[2])
if #held == 0 then redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], ARGV[2]) end
return #held
"""


class PendingCapture(CaptureSession):
    """Letters of one consumer group: pending entries delivered more than the threshold.

    Entries the console's own consumer already holds come first, whatever their idle time:
    they were claimed by an earlier capture that stopped before its XACK, and their copies
    may be in custody waiting to be matched.
    """

    def __init__(self, client: redis.Redis, where: str, stream: str, group: str, options: Options) -> None:
        self.client = client
        self.where = where
        self.stream = stream
        self.group = group
        self.options = options
        self.held = PendingWalk(client, stream, group, options, consumer=options.consumer, idle=False)
        self.others = PendingWalk(client, stream, group, options)

    def next_batch(self, max_count: int, wait_seconds: float) -> list[Received]:
        batch: list[Received] = []
        with translated_errors(self.where):
            while len(batch) < max_count and not self.held.done:
                batch.extend(self._read(self.held.take(max_count - len(batch))))
            while len(batch) < max_count and not self.others.done:
                rows = [row for row in self.others.take(max_count - len(batch))
                        if text(row["consumer"]) != self.options.consumer]
                batch.extend(self._read(self._claim(rows)))
        return batch

    def _claim(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The rows this console now holds: XCLAIM JUSTID succeeds only for entries still idle
        (a worker retrying one keeps it), and leaves their delivery counts alone."""
        if not rows:
            return []
        ids: list[StreamIdT] = [text(row["message_id"]) for row in rows]
        # Redis 7 drops ids whose entry was deleted from the stream, both from the reply and
        # from the pending list: there is nothing left of them to capture.
        claimed_ids = cast("list[bytes]", self.client.xclaim(  # JUSTID: ids alone, not entries
            self.stream, self.group, self.options.consumer, self.options.min_idle_ms, ids, justid=True))
        claimed = {text(i) for i in claimed_ids}
        return [row for row in rows if text(row["message_id"]) in claimed]

    def _read(self, rows: list[dict[str, Any]]) -> list[Received]:
        if not rows:
            return []
        pipe = self.client.pipeline(transaction=False)
        for row in rows:
            pipe.xrange(self.stream, row["message_id"], row["message_id"])
        received, vanished = [], []
        for row, entries in zip(rows, pipe.execute(), strict=True):
            if entries:
                entry_id, fields = entries[0]
                received.append(pending_received(self.stream, self.group, text(entry_id), fields, row,
                                                 self.options.body_fields))
            else:
                vanished.append(row["message_id"])
        if vanished:
            # Deleted from the stream while we held them: nothing is left to capture.
            self.client.xack(self.stream, self.group, *vanished)
        return received

    def ack(self, batch: Sequence[Received]) -> None:
        if batch:
            with translated_errors(self.where):
                self.client.xack(self.stream, self.group, *[m.token for m in batch])

    def close(self) -> None:
        try:
            with translated_errors(self.where):
                self.client.eval(_FORGET_CONSUMER, 1, self.stream, self.group, self.options.consumer)
        except BrokerError as exc:
            # Tidying only: a leftover idle consumer name harms nothing.
            log.info("could not drop consumer %s from %s/%s: %s", self.options.consumer, self.stream,
                     self.group, exc.message)


class DeadStreamCapture(CaptureSession):
    """Letters of a dead stream, in id order; committed ones are deleted from it."""

    def __init__(self, client: redis.Redis, where: str, stream: str, options: Options) -> None:
        self.client = client
        self.where = where
        self.stream = stream
        self.options = options
        self.cursor = "-"

    def next_batch(self, max_count: int, wait_seconds: float) -> list[Received]:
        with translated_errors(self.where):
            entries = stream_entries(self.client.xrange(self.stream, self.cursor, "+", count=max_count))
        if entries:
            self.cursor = "(" + text(entries[-1][0])
        return [dead_stream_received(self.stream, text(i), fields, self.options.body_fields) for i, fields in entries]

    def ack(self, batch: Sequence[Received]) -> None:
        if batch:
            with translated_errors(self.where):
                self.client.xdel(self.stream, *[m.token for m in batch])

    def close(self) -> None:
        """Nothing to hand back: entries are deleted only by ``ack``."""
