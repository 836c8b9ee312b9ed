"""Readers: the keeper's long-lived way of reading many dead places of one broker at once
(the contract, ``PlaceReader``, is in console.brokers.base with the rest of the adapters' one).

A capture session (console.brokers.base.CaptureSession) reads one place for a while and closes.
A reader follows hundreds of places for as long as the keeper keeps them, over one connection
(the keeper opens a few readers per broker when told to: DLO_KEEPER_CONNECTIONS), and hands
over their messages as they die: pushed by the broker where it pushes (RabbitMQ consumers,
STOMP subscriptions, JetStream consumers), found by one call over every place where it does
not (a blocking XREADGROUP over many streams, one pipelined scan). An idle place costs a
subscription, not a look every poll.

What a reader hands over is not acknowledged until the keeper has committed it
(console.jobs.engines.capture.keep_taken), as a capture session's batches: a message taken,
stored, and never acknowledged comes back flagged ``redelivered`` and matches its copy.

The keeper calls a reader from one thread only (its reading thread for that broker); the
reader's own connection threads or event loop are its business.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Sequence

from console.brokers.base import Adapter, BrokerError, CaptureSession, PlaceReader, PlaceRef, Received

__all__ = ["PlaceReader", "SessionReader", "Turns"]


class Turns:
    """The places a reader follows, in the order its takes serve them: each take starts after
    the place the last one served last, so a place that always has messages (a stream) never
    keeps the others waiting.

    A take visits only the places marked as holding something (``mark``, called by the reader
    as each message arrives in its buffers), so a take over hundreds of quiet places costs the
    few that hold letters. A place stays marked until a take finds it holding fewer than it
    asked for."""

    def __init__(self) -> None:
        self.order: list[PlaceRef] = []
        self.position: dict[PlaceRef, int] = {}
        self.turn = 0
        self.marked: set[PlaceRef] = set()

    def keep(self, places: Collection[PlaceRef], new: Sequence[PlaceRef] = ()) -> None:
        """Serve ``places`` from now on: those already in turn keep their order, ``new`` ones
        come last, in the order given."""
        self.order = [place for place in self.order if place in places]
        self.order += [place for place in new if place in places and place not in self.order]
        self.position = {place: index for index, place in enumerate(self.order)}
        self.marked = {place for place in self.marked if place in places}
        self.turn %= max(1, len(self.order))

    def mark(self, place: PlaceRef) -> None:
        """The place holds something to take (a message arrived in the reader's buffer for it)."""
        self.marked.add(place)

    def serve(self, max_count: int, per_place: int,
              take_from: Callable[[PlaceRef, int], list[Received]]) -> dict[PlaceRef, list[Received]]:
        """What ``take_from(place, n)`` gives of each marked place in turn (at most ``n`` of what
        is in hand), at most ``per_place`` of one and ``max_count`` in all."""
        taken: dict[PlaceRef, list[Received]] = {}
        count = len(self.order)
        if not self.marked or not count:
            return taken
        turn, position = self.turn, self.position
        due = sorted((place for place in self.marked if place in position),
                     key=lambda place: (position[place] - turn) % count)
        left = max_count
        for place in due:
            if left <= 0:
                break
            asked = min(per_place, left)
            # Unmarked before it is read: a message arriving meanwhile marks it again.
            self.marked.discard(place)
            batch = take_from(place, asked)
            if len(batch) >= asked:
                self.marked.add(place)  # it may hold more
            if batch:
                taken[place] = batch
                left -= len(batch)
                self.turn = (position[place] + 1) % count
        return taken


class SessionReader(PlaceReader):
    """The reader of a broker that has no long-lived one: it asks the depths of all its places
    in one call (``Adapter.depths``) every LOOK_SECONDS, and reads a place that holds messages
    through a capture session until the session finds it empty."""

    #: How often the depths are asked while nothing is being read.
    LOOK_SECONDS = 0.5
    #: How long a session's batch waits for its first message: a new session's subscription may
    #: take a moment to deliver (a STOMP one); an open one's next message is in hand or near.
    FIRST_WAIT_SECONDS = 0.5
    NEXT_WAIT_SECONDS = 0.05

    def __init__(self, adapter: Adapter, *, per_place: int) -> None:
        super().__init__(adapter, per_place=per_place)
        self.places: set[PlaceRef] = set()
        self.sessions: dict[PlaceRef, CaptureSession] = {}
        self.drained: set[PlaceRef] = set()
        self.fresh: set[PlaceRef] = set()
        self.in_hand: set[PlaceRef] = set()  # places with messages taken and not yet acknowledged
        self.next_look = 0.0

    def follow(self, places: Collection[PlaceRef]) -> dict[PlaceRef, BrokerError]:
        for place in [place for place in self.sessions if place not in places]:
            self._close_session(place)
        self.drained &= set(places)
        self.places = set(places)
        return {}

    def take(self, max_count: int, wait_seconds: float) -> dict[PlaceRef, list[Received]]:
        deadline = time.monotonic() + wait_seconds
        while True:
            if not self.sessions and time.monotonic() >= self.next_look:
                self._look()
            taken: dict[PlaceRef, list[Received]] = {}
            left = max_count
            for place, session in list(self.sessions.items()):
                if left <= 0:
                    break
                wait = self.FIRST_WAIT_SECONDS if place in self.fresh else self.NEXT_WAIT_SECONDS
                self.fresh.discard(place)
                batch = session.next_batch(min(self.per_place, left), wait_seconds=wait)
                if batch:
                    taken[place] = batch
                    left -= len(batch)
                    self.in_hand.add(place)
                elif place not in self.in_hand:  # its session is closed once what it gave is acknowledged
                    self._close_session(place)
                    self.drained.add(place)
            if taken or time.monotonic() >= deadline:
                return taken
            if not self.sessions:
                time.sleep(max(0.0, min(deadline, self.next_look) - time.monotonic()))

    def _look(self) -> None:
        self.next_look = time.monotonic() + self.LOOK_SECONDS
        depths = self.adapter.depths(sorted(self.places, key=lambda place: (place.scope, place.name)))
        for place in self.places:
            if place in depths and depths[place] != 0 and place not in self.sessions:
                self.sessions[place] = self.adapter.open_capture(place, prefetch=self.per_place)
                self.fresh.add(place)
                self.drained.discard(place)

    def ack(self, place: PlaceRef, messages: Sequence[Received]) -> None:
        self.sessions[place].ack(messages)
        self.in_hand.discard(place)

    def settled(self, place: PlaceRef) -> bool:
        return place in self.drained

    def _close_session(self, place: PlaceRef) -> None:
        self.in_hand.discard(place)
        session = self.sessions.pop(place)
        try:
            session.close()
        except BrokerError:
            pass  # a session whose connection is gone has handed its messages back already

    def close(self) -> None:
        for place in list(self.sessions):
            self._close_session(place)
