"""The keeper's reader of many NATS dead places: the adapter's one connection, and a standing
pull request on each followed place's trackers.

A NATS dead place is a source consumer; its deaths are the advisories the console keeps in its
advisory stream, read through the place's tracker consumers (``advisories.py``, one per
advisory kind). Each tracker gets a subscription on an inbox of its own and one pull request
(``$JS.API.CONSUMER.MSG.NEXT``) that stays open on the server for up to ``EXPIRES_SECONDS``
(and half the tracker's ack wait, ``expiry``): the server pushes an advisory down it the moment
one is stored, and answers 408 when the request expires, which is when the reader asks again.
So an idle place costs two subscriptions and a request to each of its trackers every 15 s (the
default ack wait of 30 s); nothing is asked per take (measured by benchmarks/nats_reader_idle.py).
Each request has a reply subject of its own, so the server's word on an older request is told
apart; a request the server dropped without a word (a freshly restarted nats-server 2.9.10
does) counts as ended once well past its expiry (``Tracker.lapsed``), and is asked again.

Bounded: a pull request asks for at most the room the place has left, ``per_place`` less the
advisories this reader holds of it (arrived and waiting for a take, or taken and not yet
acknowledged) and less what its other tracker's request may still bring. The room is shared
between the two trackers when both ask at once. ``take`` serves the places with advisories in
hand in turn (a place served goes to the back of the line) and turns each advisory into its
letter as the capture does (``capture.received``: the dead message fetched by sequence,
unreadable advisories terminated and dropped). An advisory sent again while in hand or just
after its ack (its ack wait ran out while its take was being stored) is dropped: the one ack
covers both (``advisories.RecentAcks``). ``ack``
acknowledges, then deletes the advisories (``NatsAdapter.acknowledge``).

Letting go (a place no longer followed, or ``close``): the subscriptions are drained, so what
the server had already sent lands here, and everything held is NAKed; not at once where a
request of ours is still open, but once that request has expired (``_let_go`` says why): up to
half the ack wait. An advisory the server sends in the instant between the unsubscribe and its
noticing stays out of sight for the tracker's ack wait, then comes back. Whatever comes back
is matched with a copy committed before (every NATS letter is flagged redelivered,
``capture.received``).

A place whose source consumer or stream is gone is refused by ``follow`` (permanent): the
keeper stops keeping it. A tracker deleted while followed (a 409 "Consumer Deleted" or no
responder) drops the place; the keeper's next ``follow`` naming it makes its trackers again.

Threads: the keeper calls from its thread; every piece of state here is touched only on the
adapter's event loop (``adapter.call``), where the subscriptions' callbacks run too.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections import OrderedDict
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import nats.errors
from nats.aio.client import Client
from nats.aio.msg import Msg
from nats.js import JetStreamContext
from nats.js.api import ConsumerInfo, Header
from nats.js.errors import NotFoundError

from console.brokers.base import BrokerError, PlaceReader, PlaceRef, Received
from console.brokers.nats.advisories import TRACKER_ACK_WAIT, RecentAcks, seq_of
from console.brokers.nats.capture import received
from console.brokers.nats.depths import consumers_of, trackers_of

if TYPE_CHECKING:
    from console.brokers.nats.adapter import NatsAdapter

log = logging.getLogger(__name__)

#: How long one pull request stays open on the server, at most: an idle tracker costs one
#: request and one 408 answer per this many seconds. Never more than half the tracker's ack
#: wait (``expiry``), for the reason told there.
EXPIRES_SECONDS = 30.0
#: How long past its expiry a request is still waited for at least (``Tracker.lapsed``).
LAPSE_SECONDS = 2.0
#: Status answers that end a pull request without anything wrong (expired, nothing left).
DONE_STATUSES = {"408", "404"}


@dataclass
class Tracker:
    """One tracker consumer of a followed place, its inbox and its standing request."""

    name: str
    expires: float  # seconds a request of ours stays open (``expiry``)
    subscription: Any = None
    inbox: str = ""  # each request's reply subject is ``<inbox>.<number>``
    next_subject: str = ""  # where its pull requests go
    asked: int = 0  # advisories the open request may still bring (0: no request open)
    open_until: float = 0.0  # the loop's clock when the open request expires
    reply: str = ""  # the open request's reply subject: the server's word on an older one is stale
    sent: int = 0  # requests sent

    def lapsed(self, now: float) -> bool:
        """Whether the open request is past its expiry with no word from the server: nats-server
        2.9.10 freshly restarted dropped pull requests without the 408 that ends them (seen: 156
        of 400 trackers waited on requests the server no longer held)."""
        return bool(self.asked) and now > self.open_until + max(LAPSE_SECONDS, self.expires)


@dataclass
class Followed:
    place: PlaceRef
    trackers: list[Tracker]
    acked: RecentAcks  # acknowledged a moment ago (``holds``)
    waiting: list[Msg] = field(default_factory=list)  # arrived, not yet taken
    taken: dict[int, Msg] = field(default_factory=dict)  # taken, not yet acknowledged, by ``seq_of``
    turn: int = 0  # which tracker asks first when both ask at once
    lost: bool = False

    @property
    def held(self) -> int:
        return len(self.waiting) + len(self.taken)

    def holds(self, note: Msg) -> bool:
        """Whether this advisory is in hand already, or was acknowledged a moment ago (the
        server sends it again when its ack wait runs out while a take is being stored)."""
        seq = seq_of(note)
        return seq in self.taken or note in self.acked or any(seq_of(waiting) == seq for waiting in self.waiting)


class NatsReader(PlaceReader):
    def __init__(self, adapter: NatsAdapter, *, per_place: int) -> None:
        super().__init__(adapter, per_place=per_place)
        self.nats = adapter
        self.client: Client | None = None
        self.followed: dict[PlaceRef, Followed] = {}
        self.ready: OrderedDict[PlaceRef, None] = OrderedDict()  # places with advisories waiting, in turn
        self.lost: dict[PlaceRef, BrokerError] = {}
        self._arrived: asyncio.Event | None = None
        self.closed = False
        self.requests = 0  # pull requests sent, for benchmarks/nats_reader_idle.py

    # -- the contract ----------------------------------------------------------------------

    def follow(self, places: Collection[PlaceRef]) -> dict[PlaceRef, BrokerError]:
        wanted = set(places)
        return self.nats.call(lambda js: self._follow(js, wanted))

    def take(self, max_count: int, wait_seconds: float) -> dict[PlaceRef, list[Received]]:
        return self.nats.call(lambda js: self._take(js, max_count, wait_seconds), timeout=wait_seconds + 60)

    def ack(self, place: PlaceRef, messages: Sequence[Received]) -> None:
        notes = [received.token for received in messages]
        self.nats.call(lambda js: self._ack(js, place, notes))

    def settled(self, place: PlaceRef) -> bool:
        return self.nats.call(lambda js: self._settled(js, place))

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        if not self.followed or not self.nats.connected:
            self.followed.clear()
            return
        try:
            self.nats.call(lambda js: self._let_go(list(self.followed)), timeout=15)
        except BrokerError:
            log.warning("could not hand back the advisories held; they return after the trackers' ack wait")

    # -- on the adapter's loop -------------------------------------------------------------

    def _connection(self, js: JetStreamContext) -> Client:
        """The adapter's connection, as long as it is the one the subscriptions live on."""
        client: Client = js._nc
        if self.client is None:
            self.client = client
        if client is not self.client or not client.is_connected:
            raise BrokerError("the connection to NATS dropped: the reader's subscriptions went with it")
        return client

    async def _follow(self, js: JetStreamContext, wanted: set[PlaceRef]) -> dict[PlaceRef, BrokerError]:
        client = self._connection(js)
        if self._arrived is None:
            self._arrived = asyncio.Event()
        await self._let_go([place for place in self.followed if place not in wanted])
        refused = {place: error for place, error in self.lost.items() if place in wanted}
        self.lost.clear()
        new = [place for place in wanted if place not in self.followed and place not in refused]
        refused.update(await self._gone(js, new))
        new = [place for place in new if place not in refused]
        if not new:
            return refused
        found = await trackers_of(js, self.nats.advisory_stream, new, self.nats.advisory_ack_wait)
        for place in new:
            if place not in found:
                refused[place] = BrokerError(f"no trackers for {place.scope}/{place.name}", permanent=True)
                continue
            followed = Followed(place, [Tracker(info.name, expiry(info)) for info in found[place]],
                                acked=RecentAcks(max(info.config.ack_wait or 0 for info in found[place])))
            self.followed[place] = followed
            for tracker in followed.trackers:
                tracker.inbox = client.new_inbox()
                tracker.next_subject = f"{js._prefix}.CONSUMER.MSG.NEXT.{self.nats.advisory_stream}.{tracker.name}"
                tracker.subscription = await client.subscribe(
                    f"{tracker.inbox}.*", cb=functools.partial(self._arrive, followed, tracker))
            await self._ask(followed)
        return refused

    async def _gone(self, js: JetStreamContext, places: list[PlaceRef]) -> dict[PlaceRef, BrokerError]:
        """Places whose source stream or consumer no longer exists: one consumer listing per
        stream named."""
        gone: dict[PlaceRef, BrokerError] = {}
        for scope in {place.scope for place in places}:
            of_scope = [place for place in places if place.scope == scope]
            try:
                names = {info.name for info in await consumers_of(js, scope)} if scope else set()
            except NotFoundError:
                names = set()
            for place in of_scope:
                if place.name not in names:
                    gone[place] = BrokerError(
                        f"NATS has no consumer {place.name!r} on stream {scope!r}", permanent=True)
        return gone

    async def _ask(self, followed: Followed) -> None:
        """Open a pull request on each tracker that has none, within the place's room."""
        if followed.lost or self.closed:
            return
        assert self.client is not None
        idle = [t for t in followed.trackers if not t.asked]
        if not idle:
            return
        start = followed.turn % len(idle)
        followed.turn += 1
        idle = idle[start:] + idle[:start]
        for n, tracker in enumerate(idle):
            room = self.per_place - followed.held - sum(t.asked for t in followed.trackers)
            if room <= 0:
                return
            share = room if n == len(idle) - 1 else max(1, room // (len(idle) - n))
            tracker.asked = share
            tracker.open_until = asyncio.get_running_loop().time() + tracker.expires
            tracker.sent += 1
            tracker.reply = f"{tracker.inbox}.{tracker.sent}"
            request = {"batch": share, "expires": int(tracker.expires * 1e9)}
            self.requests += 1
            await self.client.publish(tracker.next_subject, json.dumps(request).encode(), reply=tracker.reply)

    async def _arrive(self, followed: Followed, tracker: Tracker, note: Msg) -> None:
        """A subscription's callback: an advisory, or the server's word on the open request."""
        status = note.headers.get(Header.STATUS) if note.headers else None
        if status is None:
            tracker.asked = max(0, tracker.asked - 1)
            if not followed.holds(note):  # else its ack wait ran out while held: one letter
                followed.waiting.append(note)
            self.ready[followed.place] = None
            if self._arrived is not None:
                self._arrived.set()
            if tracker.asked == 0:
                await self._ask(followed)
            return
        if status == "100" or note.subject != tracker.reply:  # a heartbeat, or an older request's end
            return
        tracker.asked = 0
        if status in DONE_STATUSES:
            await self._ask(followed)
            return
        description = note.headers.get(Header.DESCRIPTION, "") if note.headers else ""
        if status == "503" or "deleted" in description.lower():
            log.warning("tracker %s of %s/%s is gone (%s %s); letting the place go",
                        tracker.name, followed.place.scope, followed.place.name, status, description)
            followed.lost = True
            self.lost[followed.place] = BrokerError(
                f"the advisory tracker of {followed.place.scope}/{followed.place.name} was deleted", permanent=False)
            asyncio.get_running_loop().create_task(self._let_go([followed.place]))
            return
        # Another refusal (409 Exceeded MaxWaiting, Leadership Change...): ask again at the next take.
        log.info("tracker %s answered %s %s", tracker.name, status, description)

    async def _take(self, js: JetStreamContext, max_count: int, wait_seconds: float
                    ) -> dict[PlaceRef, list[Received]]:
        self._connection(js)
        assert self._arrived is not None, "follow before take"
        loop = asyncio.get_running_loop()
        now = loop.time()
        deadline = now + wait_seconds
        for followed in self.followed.values():
            for tracker in followed.trackers:
                if tracker.lapsed(now):
                    tracker.asked = 0
            if not all(t.asked for t in followed.trackers):
                await self._ask(followed)  # a request refused earlier (409) or lapsed: asked again here
        while True:
            picked: list[tuple[Followed, list[Msg]]] = []
            left = max_count
            for place in list(self.ready):
                if left <= 0:
                    break
                followed = self.followed[place]
                notes = followed.waiting[:min(self.per_place, left)]
                del followed.waiting[:len(notes)]
                del self.ready[place]
                if followed.waiting:
                    self.ready[place] = None  # back of the line
                for note in notes:
                    followed.taken[seq_of(note)] = note
                left -= len(notes)
                picked.append((followed, notes))
            if not self.ready:
                self._arrived.clear()
            taken: dict[PlaceRef, list[Received]] = {}
            for followed, notes in picked:
                letters = await asyncio.gather(*(received(js, note) for note in notes))
                for note, found in zip(notes, letters, strict=True):
                    if found is None:  # dropped for good (terminated)
                        followed.taken.pop(seq_of(note), None)
                kept = [found for found in letters if found is not None]
                if kept:
                    taken[followed.place] = kept
                if len(kept) < len(notes):
                    await self._ask(followed)
            remaining = deadline - loop.time()
            if taken or remaining <= 0:
                return taken
            try:
                await asyncio.wait_for(self._arrived.wait(), remaining)
            except TimeoutError:
                pass
            self._connection(js)

    async def _ack(self, js: JetStreamContext, place: PlaceRef, notes: list[Msg]) -> None:
        await self.nats.acknowledge(js, notes)
        followed = self.followed.get(place)
        if followed is not None:
            for note in notes:
                followed.taken.pop(seq_of(note), None)
            followed.acked.add(notes)
            await self._ask(followed)

    async def _settled(self, js: JetStreamContext, place: PlaceRef) -> bool:
        followed = self.followed.get(place)
        if followed is not None and followed.held:
            return False
        try:
            if await self.nats.nothing_out(js, place, letting_go=lambda: self._let_go([place])):
                return True
            if followed is not None and place not in self.followed:  # its trackers were made again
                await self._follow(js, set(self.followed) | {place})
        except (BrokerError, nats.errors.Error):  # unsure: not settled
            pass
        return False

    async def _let_go(self, places: list[PlaceRef]) -> None:
        """Stop reading these places and hand back what is held of them (NAK).

        The subscriptions are drained first (what the server had sent lands in ``waiting``).
        A tracker's request still open on the server then has nobody listening; nats-server
        2.9.10 mishandles a NAKed advisory it tries to hand to such a request when no other
        request waits: the next reader got it twice, once as a first delivery (so not flagged
        redelivered). So the NAK asks the server to hold the advisory until that request has
        expired (a few seconds at most, ``expiry``); a tracker whose request was used up gets
        its advisories back at once."""
        letting_go = [self.followed.pop(place) for place in places if place in self.followed]
        for followed in letting_go:
            followed.lost = True  # no more requests
            self.ready.pop(followed.place, None)
            for tracker in followed.trackers:
                try:
                    await tracker.subscription.drain()
                except Exception:  # a connection that is gone has dropped them already
                    pass
        now = asyncio.get_running_loop().time()
        for followed in letting_go:
            delays = {t.name: (t.open_until - now + 1.0 if t.asked else 0.0) for t in followed.trackers}
            notes = followed.waiting + list(followed.taken.values())
            followed.waiting, followed.taken = [], {}
            for note in notes:
                delay = delays.get(note.metadata.consumer or "", 0.0)
                try:
                    await note.nak(delay=delay if delay > 0 else None)
                except Exception:
                    log.warning("could not hand back an advisory of %s/%s; it returns after the ack wait",
                                followed.place.scope, followed.place.name)
        if letting_go and self.client is not None and self.client.is_connected:
            await self.client.flush()


def expiry(tracker: ConsumerInfo) -> float:
    """How long a pull request on this tracker stays open: at most half its ack wait. A reader
    that dies leaves its requests open on the server with nobody listening, and what it held
    comes back after the ack wait; nats-server 2.9.10, trying such a request first, handed the
    next reader the same advisory twice, once as a first delivery (seen here). So the requests
    are gone before anything they brought comes back."""
    ack_wait = tracker.config.ack_wait or TRACKER_ACK_WAIT
    return max(0.25, min(EXPIRES_SECONDS, ack_wait / 2))
