"""Capture from one dead place: read its advisories, fetch each dead message, ack after commit."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from nats.errors import TimeoutError as NatsTimeout
from nats.js import JetStreamContext

from console.brokers.base import CaptureSession, PlaceRef, Received
from console.brokers.nats import advisories
from console.brokers.nats.advisories import seq_of
from console.brokers.nats.letters import fetch_dead, letter

if TYPE_CHECKING:
    from console.brokers.nats.adapter import NatsAdapter

log = logging.getLogger(__name__)


class NatsCapture(CaptureSession):
    """Batches of letters from the place's advisory consumers (one per advisory kind).

    ``ack`` acknowledges the advisories and deletes them from the console's advisory stream
    (``NatsAdapter.acknowledge``), so they are not captured again; ``close`` naks the
    ones not acknowledged so the next capture gets them at once (every letter is flagged
    redelivered, so a copy committed before a crash is matched instead of stored twice).

    The place is drained when no advisory is waiting and none is out with another session
    (those this session holds do not count): the advisories a crashed capture held come back
    after the ack wait, and this session waits for them rather than report the place empty
    while they are still out.
    """

    def __init__(self, adapter: NatsAdapter, place: PlaceRef) -> None:
        self.adapter = adapter
        self.place = place
        self.unacked: dict[int, Any] = {}
        self.acked = advisories.RecentAcks(adapter.advisory_ack_wait)
        self._subscriptions: dict[str, Any] = adapter.call(self._subscribe)

    async def _subscribe(self, js: JetStreamContext) -> dict[str, Any]:
        trackers = await self.adapter.trackers(js, self.place)
        return {t.name: await js.pull_subscribe_bind(t.name, self.adapter.advisory_stream) for t in trackers}

    def next_batch(self, max_count: int, wait_seconds: float) -> list[Received]:
        # No blind wait (``wait_seconds``): the advisory consumers say how many advisories wait.
        batch = self.adapter.call(lambda js: self._next(js, max_count), timeout=self.adapter.advisory_ack_wait + 60)
        for received in batch:
            self.unacked[seq_of(received.token)] = received.token
        return batch

    async def _next(self, js: JetStreamContext, max_count: int) -> list[Received]:
        notes: list[Any] = []
        out_elsewhere: list[tuple[str, float]] = []
        for name, subscription in self._subscriptions.items():
            if len(notes) >= max_count:
                break
            tracker = await js.consumer_info(self.adapter.advisory_stream, name)
            if tracker.num_pending:
                notes += await _fetch(subscription, min(max_count - len(notes), tracker.num_pending), 5.0)
            elif tracker.num_ack_pending > self._held(name):
                out_elsewhere.append((name, tracker.config.ack_wait or self.adapter.advisory_ack_wait))
        if not notes and out_elsewhere:
            # Everything left is held by a capture that died before acking: wait for the server
            # to hand it back.
            name, ack_wait = out_elsewhere[0]
            notes = await _fetch(self._subscriptions[name], max_count, ack_wait + 5)
        # An advisory whose ack wait ran out while this session held it comes again: one letter.
        notes = list({seq_of(note): note for note in notes
                      if seq_of(note) not in self.unacked and note not in self.acked}.values())
        return [received for note in notes if (received := await self._letter(js, note)) is not None]

    def _held(self, consumer: str) -> int:
        """How many of the consumer's advisories this session holds unacknowledged (taken
        ahead while the batch before them is stored): those are not out with another capture."""
        return sum(1 for note in self.unacked.values() if note.metadata.consumer == consumer)

    async def _letter(self, js: JetStreamContext, note: Any) -> Received | None:
        return await received(js, note)

    def ack(self, batch: Sequence[Received]) -> None:
        notes = [received.token for received in batch]
        self.adapter.call(lambda js: self.adapter.acknowledge(js, notes))
        self.acked.add(notes)
        for note in notes:
            self.unacked.pop(seq_of(note), None)

    def close(self) -> None:
        notes, self.unacked = list(self.unacked.values()), {}
        subscriptions, self._subscriptions = list(self._subscriptions.values()), {}
        if not subscriptions or not self.adapter.connected:
            return

        async def hand_back(js: JetStreamContext) -> None:
            for note in notes:
                await note.nak()
            for subscription in subscriptions:
                await subscription.unsubscribe()

        try:
            self.adapter.call(hand_back, timeout=10)
        except Exception:  # best effort: unacked advisories come back after ack_wait anyway
            log.warning("could not hand back %d advisories; they return after ack_wait", len(notes))


async def received(js: JetStreamContext, note: Any) -> Received | None:
    """The letter behind one advisory taken from a tracker (the note is its token); None for a
    body that is not an advisory, which is dropped for good. Shared by the capture and the
    keeper's reader.

    Every letter is flagged ``redelivered``, whatever the delivery count says: a restarted
    nats-server 2.9.10 hands out advisories still waiting for their acknowledgement as first
    deliveries (seen in the NATS crash test: 8 letters committed before a kill, stored again
    after the server's restart). Custody matches only redelivered messages against copies
    committed and not yet acknowledged; a flag set for nothing costs one look-up per batch."""
    try:
        advisory = advisories.parse(note.subject, note.data)
    except (ValueError, KeyError, TypeError):
        # Not an advisory the server wrote (anyone may publish on these subjects): there is
        # no letter behind it, so drop it for good.
        log.warning("dropping an unreadable advisory on %r", note.subject)
        await note.term()
        return None
    message = await fetch_dead(js, advisory)
    return letter(advisory, message, token=note, redelivered=True)


async def _fetch(subscription: Any, count: int, timeout: float) -> list[Any]:
    try:
        messages: list[Any] = await subscription.fetch(count, timeout=timeout)
        return messages
    except NatsTimeout:
        return []
