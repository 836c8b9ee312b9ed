"""NATS JetStream adapter.

Connection string: ``nats://host:4222``. Credentials: ``username`` + ``password``, or a
``password`` alone sent as a token. Options: ``advisory_stream`` (default ``DLO_ADVISORIES``),
the stream where the console keeps the delivery advisories; ``advisory_ack_wait`` (seconds,
default 30), how long advisories taken by a capture that died stay out of sight (set when the
console first makes a place's advisory consumers).

How letters die and where the console finds them:

- JetStream has no dead-letter queue. A durable consumer with ``max_deliver`` set (> 0) is a
  source: when a message would exceed it, the server stops delivering it and publishes one
  MAX_DELIVERIES advisory; a worker's ``AckTerm`` publishes one MSG_TERMINATED advisory. The
  message itself stays in its stream.
- The console binds a stream of its own to those advisory subjects (``advisories.py``), created
  idempotently by ``check()`` and ``discover()``, so no death is lost while the console is down.
  Once a letter is stored, its advisory is acknowledged and, in a stream the console made,
  deleted (``acknowledge``); a stream the operator named is left as it is.
- A dead place is one such source consumer: ``PlaceInfo(name=<consumer>, scope=<stream>,
  kind="consumer", discovered_by="advisory", origins=[<consumer>])``. Its depth is the number
  of its advisories the console has not acknowledged yet (a durable consumer of the console's
  per place on the advisory stream); the source stream's messages are never touched to count.
- Capture reads those advisories and fetches each dead message by stream sequence (MSG.GET,
  which no consumer sees). Envelope: origin_address = the message's subject, origin_queue = the
  consumer, reason ``max_deliver`` / ``terminated``, death_count = deliveries, last_failed_at =
  the advisory's timestamp; details {stream, stream_seq, consumer}. message_id = the
  ``Nats-Msg-Id`` header, else ``<stream>:<seq>``. The stored properties carry
  ``nats_stream``/``nats_seq``/``nats_subject``/``nats_consumer`` for the replay. The original
  is NOT deleted at capture: other consumers of the stream may still need it.
- A message that aged out before capture becomes a letter with reason ``gone``, an empty body
  and ``details["gone"] = True`` (the death is recorded, the job succeeds); replaying it is
  refused with that explanation.
- Replay: the job names the origin consumer as destination; the adapter publishes to the
  message's subject. JetStream cannot deliver to one consumer, so every consumer of that stream
  (whose filter matches) sees it again; and when several consumers gave up on the same message,
  each has its own letter, and replaying each publishes it once more. A move names a subject.
  The replay id goes into ``Nats-Msg-Id`` so JetStream drops duplicates within its window
  (2 minutes by default); after the PubAck the original is deleted by sequence.
- Peek is safe: advisories and messages are read with MSG.GET, which changes no consumer.

nats-py is asyncio-only: each adapter owns a private event loop on a background thread (its
public methods are synchronous, for Django) and one connection made on first use, remade if it
dropped. Connects give up after one retry, so an unreachable server is a quick BrokerError.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, TypeVar

from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.api import ConsumerInfo, RawStreamMsg
from nats.js.errors import NotFoundError

from console.brokers.asyncloop import LoopThread
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
from console.brokers.nats import advisories
from console.brokers.nats.capture import NatsCapture
from console.brokers.nats.connection import connect, translate
from console.brokers.nats.depths import consumers_of, trackers_of
from console.brokers.nats.letters import fetch_dead, letter
from console.brokers.nats.publish import publish_all
from console.brokers.nats.reader import NatsReader
from console.letters.policy import DeliveryPolicy, duration

T = TypeVar("T")
CALL_TIMEOUT = 60.0

log = logging.getLogger(__name__)


class NatsAdapter(Adapter):
    kind = "nats"
    label = "NATS JetStream"
    url_example = "nats://host:4222"
    can_peek_safely = True
    can_move_server_side = False
    can_move_to_destination = True

    def __init__(self, config: BrokerConfig) -> None:
        super().__init__(config)
        self.advisory_stream = str(config.options.get("advisory_stream") or advisories.STREAM)
        self.advisory_ack_wait = float(config.options.get("advisory_ack_wait") or advisories.TRACKER_ACK_WAIT)
        self._loop: LoopThread | None = None
        self._client: Client | None = None
        self._owns_advisories: bool | None = None  # whether captured advisories are deleted (acknowledge)

    # -- plumbing --------------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        return self._client is not None and self._client.is_connected

    def call(self, action: Callable[[JetStreamContext], Awaitable[T]], timeout: float = CALL_TIMEOUT) -> T:
        """Run ``action(js)`` on the adapter's loop, connected; errors come out as BrokerError."""
        if self._loop is None or not self._loop.running:
            self._loop = LoopThread(f"nats-adapter-{id(self):x}")

        async def connected_action() -> T:
            if self._client is None or self._client.is_closed:
                self._client = await connect(self.config)
            return await action(self._client.jetstream())

        try:
            return self._loop.run(connected_action(), timeout)
        except BrokerError:
            raise
        except Exception as exc:
            raise translate(exc, self.config) from exc

    async def trackers(self, js: JetStreamContext, place: PlaceRef) -> list[ConsumerInfo]:
        """The console's advisory consumers for one place, made on first use."""
        return await advisories.ensure_trackers(js, self.advisory_stream, place.scope, place.name,
                                                self.advisory_ack_wait)

    async def acknowledge(self, js: JetStreamContext, notes: Sequence[Any]) -> None:
        """Advisories whose letters are committed, taken by a capture or the keeper's reader:
        acknowledged (``ack_sync`` waits for the server, so no later reader is handed them),
        then deleted from the advisory stream if the console made it (``advisories.forget``)."""
        await asyncio.gather(*(note.ack_sync() for note in notes))
        if await self.owns_advisories(js):
            await advisories.forget(js, self.advisory_stream, [advisories.seq_of(note) for note in notes])

    async def nothing_out(self, js: JetStreamContext, place: PlaceRef,
                          letting_go: Callable[[], Awaitable[None]] | None = None) -> bool:
        """No advisory of the place waits or is held unacknowledged by anyone, on the trackers
        and in the console's own stream, where captured advisories are deleted.

        Advisories left in the stream that no tracker will hand out were acknowledged before
        their delete (a capture stopped between the two), or forgotten by a restarted
        nats-server 2.9.10 (the trackers' counts said nothing was out while copies still waited,
        and the advisories came back later: 200 letters stored twice). The place's trackers are
        then made again from the stream's start, after ``letting_go`` (the caller stops reading
        them): each advisory comes back and meets its copy, or is stored if it never was."""
        trackers = await self.trackers(js, place)  # two CONSUMER.INFO, not the whole listing
        if any(t.num_pending or t.num_ack_pending for t in trackers):
            return False
        if not await self.owns_advisories(js) or not await advisories.kept(
                js, self.advisory_stream, place.scope, place.name):
            return True
        log.warning("advisories of %s/%s left in %s that no tracker hands out: its trackers are made again",
                    place.scope, place.name, self.advisory_stream)
        if letting_go is not None:
            await letting_go()
        await advisories.drop_trackers(js, self.advisory_stream, place.scope, place.name)
        return False

    async def owns_advisories(self, js: JetStreamContext) -> bool:
        """Whether the console made the advisory stream (so deletes what it captured)."""
        if self._owns_advisories is None:
            self._owns_advisories = await advisories.is_own(js, self.advisory_stream)
        return self._owns_advisories

    def close(self) -> None:
        loop, client = self._loop, self._client
        self._loop = self._client = None
        if loop is not None:
            loop.stop(client.close() if client is not None and not client.is_closed else None)

    # -- the contract ----------------------------------------------------------------------

    def check(self) -> dict[str, Any]:
        async def facts(js: JetStreamContext) -> dict[str, Any]:
            await js.account_info()  # fails when JetStream is off
            await advisories.ensure_stream(js, self.advisory_stream)
            assert self._client is not None
            # nats-py keeps the version as the server sent it in INFO, unparsed
            version = self._client.connected_server_version._server_version
            return {"version": version, "jetstream": True, "advisory_stream": self.advisory_stream}

        return self.call(facts, timeout=15)

    def settled(self, place: PlaceRef) -> bool:
        try:
            return self.call(lambda js: self.nothing_out(js, place))
        except BrokerError:  # unsure: not settled
            return False

    def discover(self) -> list[PlaceInfo]:
        async def places(js: JetStreamContext) -> list[PlaceInfo]:
            await advisories.ensure_stream(js, self.advisory_stream)
            found = []
            for stream in await _all(js.streams_info):
                name = stream.config.name
                if name is None or name == self.advisory_stream:
                    continue  # None: nats-py's types allow a stream without a name; the server lists none
                try:
                    consumers = await consumers_of(js, name)
                except NotFoundError:
                    continue  # deleted since the listing
                for consumer in consumers:
                    if _is_source(consumer):
                        trackers = await self.trackers(js, PlaceRef(consumer.name, name))
                        found.append(await self._describe(js, PlaceRef(consumer.name, name), consumer, trackers))
            return found

        return self.call(places)

    def stats(self, place: PlaceRef) -> PlaceInfo:
        async def info(js: JetStreamContext) -> PlaceInfo:
            trackers = await self.trackers(js, place)
            try:
                source = await js.consumer_info(place.scope, place.name)
            except NotFoundError:
                source = None
            return await self._describe(js, place, source, trackers)

        return self.call(info)

    async def _describe(self, js: JetStreamContext, place: PlaceRef, source: ConsumerInfo | None,
                        trackers: list[ConsumerInfo]) -> PlaceInfo:
        """Depth and oldest death from the console's advisory consumers; the rest from the source
        consumer (None when it was deleted: its recorded deaths can still be captured)."""
        oldest = [note.time for tracker in trackers
                  for note in await _unacknowledged(js, self.advisory_stream, tracker, 1) if note.time]
        info = PlaceInfo(
            name=place.name, scope=place.scope, kind="consumer", discovered_by="advisory", origins=[place.name],
            depth=advisories.not_captured(trackers), oldest_at=min(oldest, default=None),
            consumers=1 if source else 0, details={"advisory_consumers": [t.name for t in trackers]},
        )
        if source is None:
            info.details["source_consumer"] = "gone"
        else:
            info.details.update(
                max_deliver=source.config.max_deliver, filter_subject=source.config.filter_subject or "",
                num_pending=source.num_pending, num_ack_pending=source.num_ack_pending,
                num_redelivered=source.num_redelivered,
            )
        return info

    def delivery_policy(self, origin: PlaceRef) -> DeliveryPolicy:
        """From the consumer's config: ``max_deliver`` and ``backoff`` (else the ack wait)."""

        async def info(js: JetStreamContext) -> ConsumerInfo | None:
            try:
                consumer: ConsumerInfo = await js.consumer_info(origin.scope, origin.name)
                return consumer
            except NotFoundError:
                return None

        consumer = self.call(info)
        if consumer is None:
            return DeliveryPolicy(told=False, notes=(f"no consumer {origin.name} on stream {origin.scope}",))
        config = consumer.config
        limit = config.max_deliver if (config.max_deliver or 0) > 0 else None
        notes = () if config.backoff or not config.ack_wait else (
            f"redelivered after the ack wait ({duration(config.ack_wait)})",)
        return DeliveryPolicy(
            told=True, max_deliveries=limit, backoff=tuple(config.backoff or ()), notes=notes,
            dead_place=f"a MAX_DELIVERIES advisory (the message stays in stream {origin.scope})" if limit else "",
            # The console's dead place for a consumer that gives up is that consumer itself.
            dead_places=((origin.name, origin.scope),) if limit else (),
        )

    def depths(self, places: Sequence[PlaceRef]) -> dict[PlaceRef, int | None]:
        """Advisories not yet acknowledged per place, for all places from one listing of the
        advisory stream's consumers (``depths.trackers_of``): ``ceil(consumers / 256)`` round
        trips, whatever the number of places, plus a few for a place whose trackers are not made
        yet. A place that cannot be one (no stream or consumer named) is left out."""
        if not places:
            return {}

        async def count(js: JetStreamContext) -> dict[PlaceRef, int | None]:
            found = await trackers_of(js, self.advisory_stream, list(places), self.advisory_ack_wait)
            return {place: advisories.not_captured(trackers) for place, trackers in found.items()}

        return self.call(count)

    def open_capture(self, place: PlaceRef, *, prefetch: int) -> CaptureSession:
        return NatsCapture(self, place)

    def open_reader(self, *, per_place: int) -> PlaceReader:
        """A standing pull request on each followed place's trackers, over this adapter's
        connection (console.brokers.nats.reader)."""
        return NatsReader(self, per_place=per_place)

    def peek(self, place: PlaceRef, limit: int) -> list[Received]:
        """The place's letters not yet captured, read with MSG.GET: no consumer sees the reads."""

        async def browse(js: JetStreamContext) -> list[Received]:
            trackers = await self.trackers(js, place)
            notes: list[RawStreamMsg] = []
            for tracker in trackers:
                notes += await _unacknowledged(js, self.advisory_stream, tracker, limit)
            found: list[Received] = []
            for note in sorted(notes, key=lambda n: n.seq or 0)[:limit]:
                try:
                    advisory = advisories.parse(note.subject or "", note.data or b"")
                except (ValueError, KeyError, TypeError):
                    continue
                found.append(letter(advisory, await fetch_dead(js, advisory), token=None, redelivered=False))
            return found

        return self.call(browse)

    def publish(self, messages: Iterable[Outgoing], *, window: int) -> list[PublishResult]:
        batch = list(messages)
        if not batch:
            return []

        async def send(js: JetStreamContext) -> list[PublishResult]:
            assert self._client is not None
            return await publish_all(js, batch, window=window, max_payload=self._client.max_payload)

        return self.call(send, timeout=CALL_TIMEOUT + 15 * (len(batch) // max(window, 1) + 1))


def _is_source(consumer: ConsumerInfo) -> bool:
    """A durable consumer that gives up on a message after ``max_deliver`` deliveries."""
    config = consumer.config
    return bool(config.durable_name) and (config.max_deliver or 0) > 0


async def _unacknowledged(js: JetStreamContext, stream: str, tracker: ConsumerInfo, limit: int
                          ) -> list[RawStreamMsg]:
    """Advisories above the tracker's ack floor, read by sequence (the tracker is not used)."""
    seq = (tracker.ack_floor.stream_seq if tracker.ack_floor else 0) + 1
    subject = tracker.config.filter_subject
    notes: list[RawStreamMsg] = []
    while len(notes) < limit:
        try:
            note = await js.get_msg(stream, seq, subject=subject, next=True)
        except NotFoundError:
            break
        notes.append(note)
        seq = (note.seq or seq) + 1
    return notes


async def _all(page: Callable[[int], Awaitable[list[T]]]) -> list[T]:
    """Every item of a paged JetStream listing."""
    items: list[T] = []
    while True:
        chunk = await page(len(items))
        if not chunk:
            return items
        items.extend(chunk)
