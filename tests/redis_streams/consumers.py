"""Real Redis consumers that fail, for tests: the two ways Redis Streams letters come to be.

``PoisonedGroup`` is a worker that reads with XREADGROUP, never acknowledges, and keeps
reclaiming its pending entries (XAUTOCLAIM, following the cursor until it comes back as
``0-0``), so their delivery counts climb past any threshold. ``DeadStreamWorker`` gives up
on an entry the common way: XADD it to a dead stream with ``orig_stream``, ``orig_id``,
``group``, ``deliveries`` and ``error``, then XACK it.
"""

from __future__ import annotations

from dataclasses import dataclass

import redis


def entries_of(reply: list) -> list[tuple[bytes, dict[bytes, bytes]]]:
    """The entries of a one-stream XREAD/XREADGROUP reply (``[[stream, entries]]``, or empty)."""
    return reply[0][1] if reply else []


def autoclaim_all(client: redis.Redis, stream: str, group: str, consumer: str, *, page: int = 10) -> list[bytes]:
    """Claim every pending entry of the group, one XAUTOCLAIM page at a time.

    redis-py's ``xautoclaim(justid=True)`` returns the ids without the cursor, so the full
    form is used: its first element is the cursor, ``0-0`` once the list has been walked.
    """
    claimed: list[bytes] = []
    cursor: bytes | str = "0-0"
    while True:
        cursor, entries, _deleted = client.xautoclaim(stream, group, consumer, 0, cursor, count=page)
        claimed.extend(entry_id for entry_id, _ in entries)
        if cursor in (b"0-0", "0-0"):
            return claimed


@dataclass
class PoisonedGroup:
    """A consumer group whose one worker fails every entry it is given."""

    client: redis.Redis
    stream: str
    group: str
    consumer: str = "worker-1"

    def create(self) -> PoisonedGroup:
        self.client.xgroup_create(self.stream, self.group, id="$", mkstream=True)
        return self

    def fail(self, times: int) -> None:
        """Read new entries once, then fail them ``times - 1`` more times by reclaiming them."""
        self.client.xreadgroup(self.group, self.consumer, {self.stream: ">"})
        for _ in range(times - 1):
            autoclaim_all(self.client, self.stream, self.group, self.consumer)

    def deliveries(self) -> dict[bytes, int]:
        return {row["message_id"]: row["times_delivered"]
                for row in self.client.xpending_range(self.stream, self.group, "-", "+", 10_000)}

    def read_new(self) -> list[tuple[bytes, dict[bytes, bytes]]]:
        """What the group's consumer gets next (XREADGROUP ``>``), acknowledged at once."""
        entries = entries_of(self.client.xreadgroup(self.group, "worker-2", {self.stream: ">"}))
        if entries:
            self.client.xack(self.stream, self.group, *[entry_id for entry_id, _ in entries])
        return entries


@dataclass
class DeadStreamWorker:
    """A worker that moves entries it cannot process to ``<stream>:dlq``."""

    client: redis.Redis
    stream: str
    group: str

    @property
    def dead_stream(self) -> str:
        return f"{self.stream}:dlq"

    def create(self) -> DeadStreamWorker:
        self.client.xgroup_create(self.stream, self.group, id="$", mkstream=True)
        self.client.xgroup_create(self.dead_stream, "dlq-readers", id="$", mkstream=True)
        return self

    def fail_all(self, error: str = "ValueError: bad sku", deliveries: int = 5) -> list[bytes]:
        entries = entries_of(self.client.xreadgroup(self.group, "worker-1", {self.stream: ">"}))
        for entry_id, fields in entries:
            dead = {**fields, "orig_stream": self.stream, "orig_id": entry_id, "group": self.group,
                    "deliveries": deliveries, "error": error}
            self.client.xadd(self.dead_stream, dead)
            self.client.xack(self.stream, self.group, entry_id)
        return [entry_id for entry_id, _ in entries]
