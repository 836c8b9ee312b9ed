"""An in-memory broker and its adapter, for tests of the pure logic (never instead of a real
broker's tests).

Connection string: ``memory://<name>``; every adapter with the same name shares one
``MemoryBroker``. A dead place is any queue whose name ends in ``.dlq``; a message's origin
and reason come from its ``x-origin-queue`` and ``x-reason`` headers. That naming is the
memory broker's whole topology: the queue ``q`` dead-letters into ``q.dlq`` when both exist,
and ``delivery_policy`` says so (``dead_places``; it tells nothing of delivery limits), so the
scope guard can be tested on it as on a real broker (console.access.topology).
"""

from __future__ import annotations

import itertools
from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
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
from console.brokers.readers import SessionReader
from console.letters.envelope import FailureEnvelope
from console.letters.policy import DeliveryPolicy

_tags = itertools.count(1)


@dataclass
class Message:
    body: bytes
    headers: dict[str, Any] = field(default_factory=dict)
    properties: dict[str, Any] = field(default_factory=dict)
    redelivered: bool = False


class MemoryBroker:
    """Queues of messages; ``down`` makes every call fail as an unreachable broker would."""

    instances: dict[str, MemoryBroker] = {}

    def __init__(self) -> None:
        self.queues: dict[str, deque[Message]] = {}
        self.down = False
        self.password = ""

    @classmethod
    def named(cls, name: str) -> MemoryBroker:
        return cls.instances.setdefault(name, cls())

    def queue(self, name: str) -> deque[Message]:
        return self.queues.setdefault(name, deque())


class MemoryCapture(CaptureSession):
    def __init__(self, broker: MemoryBroker, queue: deque[Message], where: str) -> None:
        self.broker = broker
        self.queue = queue
        self.where = where
        self.unacked: dict[int, Message] = {}

    def next_batch(self, max_count: int, wait_seconds: float) -> list[Received]:
        if self.broker.down:
            raise BrokerError(f"memory broker is down ({self.where})")
        batch: list[Received] = []
        while self.queue and len(batch) < max_count:
            message = self.queue.popleft()
            tag = next(_tags)
            self.unacked[tag] = message
            batch.append(_received(tag, message))
        return batch

    def ack(self, batch: Sequence[Received]) -> None:
        if self.broker.down:
            raise BrokerError(f"memory broker is down ({self.where})")
        for received in batch:
            self.unacked.pop(received.token, None)

    def close(self) -> None:
        for message in reversed(list(self.unacked.values())):
            message.redelivered = True
            self.queue.appendleft(message)
        self.unacked.clear()


def _received(tag: int, message: Message) -> Received:
    envelope = FailureEnvelope(
        origin_queue=str(message.headers.get("x-origin-queue", "")),
        reason=str(message.headers.get("x-reason", "rejected")),
        death_count=1,
        exception_type=str(message.headers.get("x-exception-type", "")),
        exception_message=str(message.headers.get("x-exception-message", "")),
    )
    return Received(
        token=tag, body=message.body, headers=dict(message.headers), properties=dict(message.properties),
        envelope=envelope, redelivered=message.redelivered,
        message_id=str(message.properties.get("message_id", "")),
    )


class MemoryAdapter(Adapter):
    kind = "memory"
    label = "In-memory (tests)"
    url_example = "memory://name"
    can_peek_safely = True
    in_process = True

    def __init__(self, config: BrokerConfig) -> None:
        super().__init__(config)
        self.broker = MemoryBroker.named(config.url.removeprefix("memory://"))

    def _ensure_up(self) -> None:
        # Errors name the broker, as every adapter's do, so an operator knows which one failed.
        if self.broker.down:
            raise BrokerError(f"memory broker is down ({self.config.url})")
        if self.broker.password and self.broker.password != self.config.password:
            raise BrokerError(f"access refused: wrong credentials for {self.config.url}", permanent=True)

    def check(self) -> dict[str, Any]:
        self._ensure_up()
        return {"version": "memory"}

    def discover(self) -> list[PlaceInfo]:
        self._ensure_up()
        return [
            PlaceInfo(name=name, discovered_by="convention", origins=[name.removesuffix(".dlq")], depth=len(q))
            for name, q in sorted(self.broker.queues.items())
            if name.endswith(".dlq")
        ]

    def delivery_policy(self, origin: PlaceRef) -> DeliveryPolicy:
        """Nothing of delivery limits; where dead letters go, by the naming above."""
        self._ensure_up()
        dead = f"{origin.name}.dlq"
        known = origin.name in self.broker.queues and dead in self.broker.queues and not origin.name.endswith(".dlq")
        return DeliveryPolicy(told=False, dead_places=((dead, origin.scope),) if known else ())

    def stats(self, place: PlaceRef) -> PlaceInfo:
        self._ensure_up()
        return PlaceInfo(name=place.name, depth=len(self.broker.queue(place.name)), consumers=0)

    def open_capture(self, place: PlaceRef, *, prefetch: int) -> CaptureSession:
        self._ensure_up()
        return MemoryCapture(self.broker, self.broker.queue(place.name), self.config.url)

    def open_reader(self, *, per_place: int) -> PlaceReader:
        return SessionReader(self, per_place=per_place)

    def peek(self, place: PlaceRef, limit: int) -> list[Received]:
        self._ensure_up()
        return [_received(0, m) for m in list(self.broker.queue(place.name))[:limit]]

    def publish(self, messages: Iterable[Outgoing], *, window: int) -> list[PublishResult]:
        self._ensure_up()
        results = []
        for out in messages:
            if out.destination not in self.broker.queues:
                results.append(PublishResult(out.key, False, f"no queue named {out.destination!r}"))
                continue
            self.broker.queue(out.destination).append(Message(out.body, dict(out.headers), dict(out.properties)))
            results.append(PublishResult(out.key, True))
        return results
