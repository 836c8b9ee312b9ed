"""The keeper's reader of many Redis dead places over one connection.

Redis pushes nothing to a reader that is not a group consumer, and a consumer group's letters
are not new entries but pending ones whose delivery count climbed, so the two kinds of place
are found differently, each in one call for all of them:

* Dead streams: one blocking ``XREAD BLOCK <ms> COUNT <per_place> STREAMS s1 s2 ... id1 id2 ...``
  over every followed dead stream, each from the last id this reader took (the first time from
  the start). Redis answers as soon as any of them gets an entry, so an idle stream costs a
  key in that one command, nothing more. A stream already holding ``per_place`` entries here
  (waiting for a take, or taken and not yet acknowledged) is left out of the call until some
  are acknowledged: otherwise its unread entries would end every block at once.
* Pending places (a group's entries delivered more than the threshold): every LOOK_SECONDS one
  pipelined round trip asks the XPENDING summary (count, lowest and highest id, entries per
  consumer) of every followed group. Only a group whose summary changed, or whose pending
  entries may since have crossed the threshold and been idle long enough (it holds entries of
  other consumers: looked at again after ``min_idle_ms``, at most RESCAN_SECONDS), is read
  further, through ``capture.PendingCapture``: the entries the console's own consumer already
  holds first (an interrupted capture's, whose copies may be in custody), then the others, each
  claimed with XCLAIM ... JUSTID only if still idle. A group with more letters than it had room
  for is read again at the next take, without waiting for a look.

What is found waits in a buffer per place and is handed over by ``take`` in turn, at most
``per_place`` of a place per take, starting each take after the place served last; a place
never has more than ``per_place`` here (buffered plus taken and unacknowledged), so memory is
bounded by the places followed, whatever their depths.

Acknowledging is the capture sessions' own: XACK for a group's entries, XDEL for a dead
stream's. Letting go of a place (``follow`` without it, or ``close``) sends nothing back,
because nothing left the broker: a group's entries stay pending with the console's consumer
(the next reader or capture takes them first), and a dead stream's stay in the stream (the next
reader reads it from the start).
"""

from __future__ import annotations

import math
import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import redis  # the redis-py client library
from redis import exceptions as rx
from redis.typing import StreamRangeResponse

from console.brokers.base import Adapter, BrokerError, PlaceReader, PlaceRef, Received
from console.brokers.readers import Turns
from console.brokers.redis.capture import DeadStreamCapture, PendingCapture
from console.brokers.redis.connection import Options, translated_errors
from console.brokers.redis.entries import dead_stream_received, stream_entries, text
from console.brokers.redis.places import PendingWalk

#: How often the followed groups' pending summaries are asked.
LOOK_SECONDS = 0.5
#: The longest a group holding other consumers' entries goes without being read further.
RESCAN_SECONDS = 5.0
#: A blocking read ends this long before the client's socket timeout would cut it.
SOCKET_MARGIN_SECONDS = 1.0


@dataclass
class _Place:
    """What the reader knows of one followed place."""

    ready: list[Received] = field(default_factory=list)  # found, not yet taken
    in_hand: set[str] = field(default_factory=set)  # entry ids taken, not yet acknowledged
    # dead streams: the last id read (XREAD reads after it)
    last_id: str = "0-0"
    # pending places: the last summary seen, when to read further regardless, and the
    # capture reading it while it has more than room for
    summary: Any = None
    due: float = 0.0
    walking: PendingCapture | None = None
    claimed: bool = False  # the console's consumer claimed something here: tidy it on letting go
    gone: bool = False  # the group was not there at a look

    def held(self) -> int:
        return len(self.ready) + len(self.in_hand)


class RedisReader(PlaceReader):
    """Follows consumer groups' pending places and dead streams of one Redis over one client."""

    def __init__(self, adapter: Adapter, client: redis.Redis, where: str, options: Options, *,
                 per_place: int) -> None:
        super().__init__(adapter, per_place=per_place)
        self.client = client
        self.where = where
        self.options = options
        self.places: dict[PlaceRef, _Place] = {}
        self.turns = Turns()
        self.next_look = 0.0
        self.closed = False

    # -- following ---------------------------------------------------------------------------

    def follow(self, places: Collection[PlaceRef]) -> dict[PlaceRef, BrokerError]:
        wanted = set(places)
        for place in [place for place, state in self.places.items() if place not in wanted or state.gone]:
            self._let_go(place)  # a place found gone is asked about again below, as a new one
        new = sorted(wanted - self.places.keys(), key=lambda place: (place.scope, place.name))
        refused = self._missing(new)
        for place in new:
            if place not in refused:
                self.places[place] = _Place()
        self.turns.keep(self.places.keys(), new)
        self.next_look = 0.0
        return refused

    def _missing(self, places: list[PlaceRef]) -> dict[PlaceRef, BrokerError]:
        """The places that are not there, asked in one round trip: XPENDING's summary answers
        NOGROUP for a group (or stream) that does not exist, TYPE names a dead stream's kind."""
        if not places:
            return {}
        pipe = self.client.pipeline(transaction=False)
        for place in places:
            if place.scope:
                pipe.xpending(place.scope, place.name)
            else:
                pipe.type(place.name)
        with translated_errors(self.where):
            replies = pipe.execute(raise_on_error=False)
        missing: dict[PlaceRef, BrokerError] = {}
        for place, reply in zip(places, replies, strict=True):
            if isinstance(reply, rx.ConnectionError | rx.TimeoutError):
                raise BrokerError(f"cannot reach Redis at {self.where}: {reply}")
            if place.scope and isinstance(reply, Exception):
                missing[place] = BrokerError(
                    f"stream {place.scope!r} has no consumer group {place.name!r} at {self.where}", permanent=True)
            elif not place.scope and (isinstance(reply, Exception) or text(reply) != "stream"):
                missing[place] = BrokerError(f"no stream named {place.name!r} at {self.where}", permanent=True)
        return missing

    def _let_go(self, place: PlaceRef) -> None:
        """Forget the place; nothing goes back to Redis because nothing left it."""
        state = self.places.pop(place)
        if place.scope and state.claimed:
            # Drops the console's consumer from the group if it holds nothing (tidying only).
            PendingCapture(self.client, self.where, place.scope, place.name, self.options).close()

    # -- taking ------------------------------------------------------------------------------

    def take(self, max_count: int, wait_seconds: float) -> dict[PlaceRef, list[Received]]:
        deadline = time.monotonic() + wait_seconds
        if max_count <= 0:
            return {}
        while True:
            now = time.monotonic()
            if now >= self.next_look:
                self._look(now)
            self._walk_on()
            if self.turns.marked:
                self._read_streams(block_ms=None)
            else:
                until = min(deadline, self.next_look) if self._groups() else deadline
                self._read_streams(block_ms=max(1, math.ceil((until - time.monotonic()) * 1000)))
            taken = self._hand_over(max_count)
            if taken or time.monotonic() >= deadline:
                return taken

    def _groups(self) -> list[PlaceRef]:
        return [place for place in self.turns.order if place.scope]

    def _look(self, now: float) -> None:
        """One pipelined XPENDING summary of every followed group; read further only the groups
        whose summary changed or whose entries may have crossed the threshold since."""
        self.next_look = now + LOOK_SECONDS
        groups = self._groups()
        if not groups:
            return
        pipe = self.client.pipeline(transaction=False)
        for place in groups:
            pipe.xpending(place.scope, place.name)
        with translated_errors(self.where):
            replies = pipe.execute(raise_on_error=False)
        for place, reply in zip(groups, replies, strict=True):
            if isinstance(reply, rx.ConnectionError | rx.TimeoutError):
                raise BrokerError(f"cannot reach Redis at {self.where}: {reply}")
            state = self.places[place]
            if isinstance(reply, Exception):
                state.gone = True  # NOGROUP: nothing to read; the next follow reports it
                continue
            summary = _summary(reply)
            changed, state.summary = summary != state.summary, summary
            if summary[0] and state.walking is None and (changed or now >= state.due):
                state.walking = PendingCapture(self.client, self.where, place.scope, place.name, self.options)

    def _walk_on(self) -> None:
        """Read the groups being walked, as far as each has room."""
        for place in self._groups():
            state = self.places[place]
            room = self.per_place - state.held()
            if state.walking is None or room <= 0:
                continue
            # The walk lists the console consumer's entries first, any taken and not yet
            # acknowledged among them: those are left out, so a walk never brings more than room.
            try:
                batch = state.walking.next_batch(room, wait_seconds=0)
            except BrokerError as exc:
                if not exc.permanent:
                    raise
                state.walking, state.gone = None, True  # the group went away while read
                continue
            known = state.in_hand | {message.token for message in state.ready}
            fresh = [message for message in batch if message.token not in known]
            state.ready.extend(fresh)
            if fresh:
                self.turns.mark(place)
            state.claimed = state.claimed or bool(fresh)
            if state.walking.held.done and state.walking.others.done:
                state.walking = None
                others = state.summary[0] - dict(state.summary[3]).get(self.options.consumer, 0)
                state.due = (time.monotonic() + min(RESCAN_SECONDS, self.options.min_idle_ms / 1000)
                             if others > 0 else math.inf)

    def _read_streams(self, *, block_ms: int | None) -> None:
        """One XREAD over every followed dead stream with room, each after its last id read."""
        streams = {place.name: self.places[place].last_id for place in self.turns.order
                   if not place.scope and self.places[place].held() < self.per_place}
        if not streams:
            if block_ms is not None:
                time.sleep(block_ms / 1000)
            return
        if block_ms is not None:
            block_ms = min(block_ms, int((self.options.socket_timeout - SOCKET_MARGIN_SECONDS) * 1000))
        with translated_errors(self.where):
            reply = self.client.xread(streams, count=self.per_place, block=block_ms)  # type: ignore[arg-type]
        # RESP2, as our clients speak: [[stream name, entries], ...]
        per_stream = cast("list[tuple[bytes, StreamRangeResponse]]", reply or [])
        for raw_name, raw_entries in per_stream:
            place = PlaceRef(text(raw_name))
            state = self.places[place]
            entries = stream_entries(raw_entries)[: self.per_place - state.held()]
            for entry_id, fields in entries:
                state.ready.append(dead_stream_received(place.name, text(entry_id), fields,
                                                        self.options.body_fields))
            if entries:
                self.turns.mark(place)
                state.last_id = text(entries[-1][0])  # what was cut off is read again next time

    def _hand_over(self, max_count: int) -> dict[PlaceRef, list[Received]]:
        """What was found, the places in turn (Turns)."""
        return self.turns.serve(max_count, self.per_place, self._from_found)

    def _from_found(self, place: PlaceRef, count: int) -> list[Received]:
        state = self.places[place]
        batch, state.ready = state.ready[:count], state.ready[count:]
        state.in_hand.update(message.token for message in batch)
        return batch

    # -- acknowledging, settling, closing ----------------------------------------------------

    def ack(self, place: PlaceRef, messages: Sequence[Received]) -> None:
        if place.scope:
            PendingCapture(self.client, self.where, place.scope, place.name, self.options).ack(messages)
        else:
            DeadStreamCapture(self.client, self.where, place.name, self.options).ack(messages)
        state = self.places.get(place)
        if state is not None:
            state.in_hand.difference_update(message.token for message in messages)

    def settled(self, place: PlaceRef) -> bool:
        """Nothing here and, for a group, no entry held by the console's consumer nor any over
        the threshold (however idle: one may be claimable soon); for a dead stream, empty."""
        state = self.places.get(place)
        if state is not None and state.held():
            return False
        try:
            with translated_errors(self.where):
                if not place.scope:
                    return int(self.client.xlen(place.name)) == 0
                summary = _summary(self.client.xpending(place.scope, place.name))
                if dict(summary[3]).get(self.options.consumer, 0):
                    return False
                return not PendingWalk(self.client, place.scope, place.name, self.options, idle=False).take(1)
        except BrokerError as exc:
            if not exc.permanent:
                raise
            return False  # the group went away: unsure, and False is always safe

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            for place in list(self.places):
                self._let_go(place)
        finally:
            self.client.close()


def _summary(reply: dict[str, Any]) -> tuple[int, str, str, tuple[tuple[str, int], ...]]:
    """XPENDING's summary as a comparable value: count, lowest and highest id, and how many
    entries each consumer holds."""
    consumers = tuple(sorted((text(c["name"]), int(c["pending"])) for c in reply.get("consumers") or ()))
    return (int(reply["pending"]), text(reply.get("min") or ""), text(reply.get("max") or ""), consumers)
