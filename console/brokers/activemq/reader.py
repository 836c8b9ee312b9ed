"""The keeper's reader of many ActiveMQ dead places: one STOMP connection, a subscription each.

Each followed queue gets a ``client-individual`` subscription with ``activemq.prefetchSize`` =
``per_place``, so ActiveMQ pushes a letter as it dies and never has more than ``per_place`` of a
place out to this reader unacknowledged: what waits here for a take, plus what was taken and
not yet acknowledged, is at most ``per_place`` per place (memory is bounded by the places
followed, whatever their depths). Frames land in a buffer per subscription (``MultiLink``);
``take`` serves the places in turn, starting each time after the last one served.

Idle, a reader costs its subscriptions on the broker and stomp.py's receiving thread asleep on
the socket: no polling, no heart-beats (the link asks for none; a broker that goes away closes
the socket, which ends the next wait with BrokerError).

Following and letting go: new places are subscribed to and dropped ones unsubscribed, in one
round trip each way (``MultiLink``). What a dropped place had delivered and was not
acknowledged goes back to the queue, in place, flagged ``redelivered`` (checked on 5.17.2:
the next consumer gets the same message-id with ``redelivered:true``); so does everything
unacknowledged when the reader closes (DISCONNECT).

Places that do not exist: over STOMP ActiveMQ cannot say which queues exist. There is no
listing, and its advisory topics reach a STOMP client only through the ``jms-advisory-json``
transformation, which needs XStream and Jettison, absent from Debian's build (asking for it
got the connection closed here). A SUBSCRIBE to a missing queue creates it, empty, and it stays
after the subscription ends (checked on 5.17.2 by listing queues over OpenWire). So a place is
followed as named: the
keeper names only places that discovery found or the operator configured, and a queue that
went missing comes back empty, which costs a subscription and loses nothing. Only a name that
cannot be a queue (empty, or a topic) is refused, permanently.

Every letter handed over is flagged ``redelivered`` (``messages.taken``, as a capture's): the
broker's own flag does not survive its restart. ``assume_redelivered`` off shows the broker's
flag (a test reads it).
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence

from console.brokers.activemq import depths, messages
from console.brokers.activemq.connection import Options
from console.brokers.activemq.multiplex import MultiLink
from console.brokers.base import Adapter, BrokerError, PlaceReader, PlaceRef, Received
from console.brokers.readers import Turns


class ActiveMQReader(PlaceReader):
    def __init__(self, adapter: Adapter, link: MultiLink, options: Options, *, per_place: int,
                 assume_redelivered: bool = True) -> None:
        super().__init__(adapter, per_place=per_place)
        self.link = link
        self.options = options
        #: Flag every letter redelivered (see the module's docstring); False shows the broker's own flag.
        self.assume_redelivered = assume_redelivered
        self.subs: dict[PlaceRef, str] = {}  # followed place -> its subscription id
        self.place_of: dict[str, PlaceRef] = {}  # subscription id -> its place
        self.turns = Turns()
        self.in_hand: dict[PlaceRef, set[str]] = {}  # ack ids taken and not yet acknowledged

    def follow(self, places: Collection[PlaceRef]) -> dict[PlaceRef, BrokerError]:
        wanted = set(places)
        refused = {place: BrokerError(f"{place.name!r} is not a queue ActiveMQ can read", permanent=True)
                   for place in wanted if not _readable(place)}
        wanted -= refused.keys()
        dropped = [place for place in self.subs if place not in wanted]
        if dropped:
            self.link.unsubscribe_all(self.subs[place] for place in dropped)
            for place in dropped:
                del self.place_of[self.subs.pop(place)]
                self.in_hand.pop(place, None)  # handed back: an ack for them now would be refused
        new = sorted(wanted - self.subs.keys(), key=lambda place: place.name)
        if new:
            subs = self.link.subscribe_all(
                (messages.destination_of(place.name),
                 {"ack": "client-individual", "activemq.prefetchSize": str(self.per_place)})
                for place in new)
            self.subs.update(zip(new, subs, strict=True))
            self.place_of.update(zip(subs, new, strict=True))
        self.turns.keep(self.subs.keys(), new)
        return refused

    def take(self, max_count: int, wait_seconds: float) -> dict[PlaceRef, list[Received]]:
        deadline = time.monotonic() + wait_seconds
        while True:
            while self.link.wait_any(0):
                pass  # what arrived already is filed first (the frames wait in the link's inbox until then)
            taken = self._in_turn(max_count)
            if taken or (left := deadline - time.monotonic()) <= 0:
                return taken
            self.link.wait_any(left)

    def _in_turn(self, max_count: int) -> dict[PlaceRef, list[Received]]:
        """What the buffers hold, the places in turn (Turns): those a frame was filed for are marked."""
        for sub in self.link.filed_since():
            if (place := self.place_of.get(sub)) is not None:
                self.turns.mark(place)
        return self.turns.serve(max_count, self.per_place, self._from_buffer)

    def _from_buffer(self, place: PlaceRef, count: int) -> list[Received]:
        frames = self.link.waiting(self.subs[place])
        batch: list[Received] = []
        while frames and len(batch) < count:
            frame = frames.popleft()
            batch.append((messages.taken if self.assume_redelivered else messages.received)(frame, place.name))
        if batch:
            self.in_hand.setdefault(place, set()).update(
                str(message.token) for message in batch if message.token is not None)
        return batch

    def ack(self, place: PlaceRef, messages: Sequence[Received]) -> None:
        """ACK frames, the last one with a receipt: ActiveMQ handles a connection's frames in
        order, so its RECEIPT means it has them all. Messages this reader no longer holds (their
        place was let go, so they went back to the queue) are skipped: ActiveMQ answers an ACK
        it does not expect with an ERROR and closes the connection."""
        held = self.in_hand.get(place, set())
        tokens = [str(message.token) for message in messages
                  if message.token is not None and str(message.token) in held]
        for token in tokens[:-1]:
            self.link.send_frame("ACK", {"id": token})
        if tokens:
            self.link.confirmed("ACK", {"id": tokens[-1]}, f"the acknowledgement of {len(tokens)} letters")
        held.difference_update(tokens)

    def settled(self, place: PlaceRef) -> bool:
        """Nothing of the place is held here (taken or buffered) and a browse of the queue finds
        nothing: ActiveMQ's browse shows every message not yet acknowledged, including those
        another consumer holds (checked on 5.17.2), so an empty browse also means nobody else
        holds one. A browse on this reader's link; a place not followed is never settled here."""
        sub = self.subs.get(place)
        if sub is None or self.in_hand.get(place) or self.link.waiting(sub):
            return False
        found = depths.count(self.link, [place.name], limit=1, idle_timeout=self.options.browse_timeout)
        return not found[place.name] and not self.link.waiting(sub)

    def close(self) -> None:
        """DISCONNECT: ActiveMQ puts back everything unacknowledged. Safe twice."""
        self.subs.clear()
        self.place_of.clear()
        self.in_hand.clear()
        self.turns.keep(())
        self.link.close()


def _readable(place: PlaceRef) -> bool:
    name = place.name.strip()
    return bool(name) and not name.startswith(("/topic/", "/temp-topic/"))
