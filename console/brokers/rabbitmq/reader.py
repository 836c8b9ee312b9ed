"""The keeper's reader of many RabbitMQ dead places: consumers on a few channels of one connection.

Each followed queue gets a consumer with manual acks and a prefetch of ``per_place``
(``basic.qos`` per consumer, ``global=False``), so RabbitMQ pushes a letter as it dies and
never has more than ``per_place`` of a queue out to this reader unacknowledged. Consumers share
channels, at most CONSUMERS_PER_CHANNEL on one and MAX_CHANNELS per connection, and the
adapter's one connection per vhost (``RabbitMQAdapter._connection``). Deliveries are made into
messages as the connection reads their frames (capture.py's ``Deliveries``) and wait, undecoded,
in a buffer per place, found by their consumer tag; ``take`` decodes only what it hands over and
serves the places in turn, starting each time after the last one served, visiting only those
whose buffers a delivery marked (``Turns.mark``).

No channel-wide cap: a ``basic.qos`` with ``global=True`` would bound a channel's messages
whatever the number of consumers, but RabbitMQ 3.10 closes the whole connection (540
NOT_IMPLEMENTED) when a consumer on such a channel reads a quorum queue (checked here), and
quorum queues are common dead places. So what this reader holds is bounded by ``per_place``
times the places it follows, and those by CONSUMERS_PER_CHANNEL * MAX_CHANNELS per vhost; the
keeper chooses ``per_place`` (DLO_KEEPER_PREFETCH) with that product in mind.

Idle, a reader costs its consumers on the broker and the connection's heartbeats: ``take``
waits on an event the deliveries set, not on the broker.

Following and letting go: a new place is first looked up by passive declare on a channel of
its own (RabbitMQ closes a channel that asks for a missing queue, and the consumers' channels
must not be the ones closed); a missing one is refused, permanently. A dropped place's consumer
is cancelled (its deliveries sent before the cancel arrive before the answer) and everything
of it in hand is nacked with ``requeue``: it goes back to the queue flagged ``redelivered``.
A queue deleted while followed cancels its consumer from the broker's side; the place is
forgotten (the next ``follow`` naming it reports it missing) and the others read on.

Known race: a queue deleted between the look-up and the consume, or just before an ``ack`` or
``settled`` asks its passive declare on the consumers' channel, closes that channel; the next
call raises BrokerError and the keeper opens a new reader (nothing is lost: what was
unacknowledged goes back).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from aiormq.abc import DeliveredMessage

from console.brokers.base import BrokerError, PlaceReader, PlaceRef, Received
from console.brokers.rabbitmq.capture import Deliveries, ack_on, delivery_of, received
from console.brokers.readers import Turns

if TYPE_CHECKING:
    from console.brokers.rabbitmq.adapter import RabbitMQAdapter

#: Consumers on one channel: a channel is one Erlang process on the broker, serving its
#: consumers' deliveries and acks in turn.
CONSUMERS_PER_CHANNEL = 200
#: Channels of one connection (vhost) this reader opens: with the above, 10,000 places.
MAX_CHANNELS = 50


@dataclass(eq=False)
class _Line:
    """One channel and the consumers on it."""

    channel: Any  # aio_pika channel
    raw: Any  # its aiormq channel
    lanes: dict[str, _Lane] = field(default_factory=dict)  # consumer tag -> lane
    outstanding: set[int] = field(default_factory=set)  # delivered, neither acked nor nacked


@dataclass(eq=False)
class _Lane:
    """One followed queue: its consumer, what it delivered and what of it was taken."""

    place: PlaceRef
    line: _Line
    tag: str = ""
    waiting: deque[DeliveredMessage] = field(default_factory=deque)  # delivered, not taken
    taken: set[int] = field(default_factory=set)  # taken, not acknowledged
    cancelled: bool = False  # by the broker: the queue is gone


class RabbitReader(PlaceReader):
    def __init__(self, adapter: RabbitMQAdapter, *, per_place: int) -> None:
        super().__init__(adapter, per_place=per_place)
        self.rabbit = adapter
        self.lanes: dict[PlaceRef, _Lane] = {}
        self.gone: dict[PlaceRef, _Lane] = {}  # cancelled by the broker with messages still taken
        self.lines: dict[str, list[_Line]] = {}  # vhost -> its channels
        self.turns = Turns()
        self.arrived: asyncio.Event | None = None  # made on the adapter's loop
        self.sending: set[asyncio.Future[Any]] = set()  # nacks sent from a delivery callback
        self.closed = False

    # -- the sync face: each call one coroutine on the adapter's loop ----------------------------

    def _run(self, coro: Any, wait: float = 0) -> Any:
        if self.closed:
            coro.close()
            raise BrokerError("this RabbitMQ reader is closed", permanent=True)
        return self.rabbit._run(coro, wait + self.rabbit.options["timeout"])

    def follow(self, places: Collection[PlaceRef]) -> dict[PlaceRef, BrokerError]:
        refused: dict[PlaceRef, BrokerError] = self._run(self._follow(set(places)), 0.1 * len(places))
        return refused

    def take(self, max_count: int, wait_seconds: float) -> dict[PlaceRef, list[Received]]:
        taken: dict[PlaceRef, list[Received]] = self._run(self._take(max_count, wait_seconds), wait_seconds)
        return taken

    def ack(self, place: PlaceRef, messages: Sequence[Received]) -> None:
        self.ack_all({place: messages})

    def ack_all(self, taken: Mapping[PlaceRef, Sequence[Received]]) -> None:
        self._run(self._ack({place: [message.token for message in messages] for place, messages in taken.items()}))

    def settled(self, place: PlaceRef) -> bool:
        answer: bool = self._run(self._settled(place))
        return answer

    def close(self) -> None:
        if self.closed:
            return
        try:
            self._run(self._close())
        except BrokerError:
            pass  # channels that are gone have handed their messages back already
        finally:
            self.closed = True

    # -- following --------------------------------------------------------------------------------

    def _vhost(self, place: PlaceRef) -> str:
        return place.scope or self.rabbit.vhost

    async def _follow(self, wanted: set[PlaceRef]) -> dict[PlaceRef, BrokerError]:
        self._check()
        for place in [place for place in self.lanes if place not in wanted]:
            await self._let_go(self.lanes[place])
        for place in [place for place in self.gone if place not in wanted]:
            await self._let_go(self.gone[place])
        new = sorted(wanted - self.lanes.keys(), key=lambda place: (place.scope, place.name))
        refused: dict[PlaceRef, BrokerError] = {}
        by_vhost: dict[str, list[PlaceRef]] = {}
        for place in new:
            by_vhost.setdefault(self._vhost(place), []).append(place)
        for vhost, refs in by_vhost.items():
            found = await self.rabbit._counts(vhost, [place.name for place in refs])  # a channel of its own
            for place in refs:
                if place.name not in found:
                    refused[place] = BrokerError(f"no queue {place.name!r} on vhost {vhost!r} at "
                                                 f"{self.rabbit.where(vhost)}", permanent=True)
                    continue
                line = await self._line(vhost)
                if line is None:
                    refused[place] = BrokerError(
                        f"this reader already follows {CONSUMERS_PER_CHANNEL * MAX_CHANNELS} places on "
                        f"{self.rabbit.where(vhost)}; another reader must follow {place.name!r}", permanent=False)
                    continue
                await self._consume(line, place)
        self.turns.keep(self.lanes.keys(), list(new))
        return refused

    async def _line(self, vhost: str) -> _Line | None:
        """A channel of the vhost with room for one more consumer, opened if none has."""
        lines = self.lines.setdefault(vhost, [])
        for line in lines:
            if len(line.lanes) < CONSUMERS_PER_CHANNEL:
                return line
        if len(lines) >= MAX_CHANNELS:
            return None
        connection = await self.rabbit._connection(vhost)
        channel = await connection.channel(publisher_confirms=False)
        raw = await channel.get_underlay_channel()
        await raw.basic_qos(prefetch_count=self.per_place, global_=False)  # each consumer's own
        line = _Line(channel, raw)
        Deliveries(raw, lambda message: self._delivered(line, message))
        raw.on_consumer_cancel_callbacks.add(lambda frame: self._cancelled(line, frame))
        lines.append(line)
        return line

    async def _consume(self, line: _Line, place: PlaceRef) -> None:
        lane = _Lane(place, line)

        async def fallback(message: DeliveredMessage) -> None:
            # aiormq's own path, for deliveries Deliveries handed back (frames out of order).
            self._delivered(line, message)

        ok = await line.raw.basic_consume(place.name, fallback, no_ack=False)
        lane.tag = ok.consumer_tag
        line.lanes[lane.tag] = lane
        self.lanes[place] = lane

    def _delivered(self, line: _Line, message: DeliveredMessage) -> None:
        """A delivery, as the connection reads it: into its place's buffer, undecoded."""
        delivery = delivery_of(message)
        tag = _tag(message)
        line.outstanding.add(tag)
        lane = line.lanes.get(delivery.consumer_tag or "")
        if lane is None or lane.cancelled:
            # Nothing of ours follows it any more: back to its queue.
            line.outstanding.discard(tag)
            self._send(line.raw.basic_nack(tag, requeue=True))
            return
        lane.waiting.append(message)
        self.turns.mark(lane.place)
        if self.arrived is not None:
            self.arrived.set()

    def _send(self, coro: Any) -> None:
        """Send from a callback that cannot wait (the task is kept until done: asyncio holds it weakly)."""
        task = asyncio.ensure_future(coro)
        self.sending.add(task)
        task.add_done_callback(self._sent)

    def _sent(self, task: asyncio.Future[Any]) -> None:
        self.sending.discard(task)
        if not task.cancelled():
            task.exception()  # a channel gone meanwhile: the next call says so, and the message went back

    def _cancelled(self, line: _Line, frame: Any) -> None:
        """The broker cancelled a consumer (its queue was deleted): forget the place, keep the rest."""
        lane = line.lanes.pop(frame.consumer_tag, None)
        if lane is None:
            return
        lane.cancelled = True
        for message in lane.waiting:  # back to the queue, if it is still there
            line.outstanding.discard(_tag(message))
            self._send(line.raw.basic_nack(_tag(message), requeue=True))
        lane.waiting.clear()
        if self.lanes.get(lane.place) is lane:
            del self.lanes[lane.place]
            if lane.taken:
                self.gone[lane.place] = lane  # the keeper may still acknowledge what it took

    async def _let_go(self, lane: _Lane) -> None:
        """Cancel the consumer, then hand back what it delivered, taken or not."""
        line = lane.line
        if not lane.cancelled:
            # Deliveries sent before the cancel arrive before its answer, into lane.waiting.
            await line.raw.basic_cancel(lane.tag)
        line.lanes.pop(lane.tag, None)
        self.lanes.pop(lane.place, None)
        self.gone.pop(lane.place, None)
        tags = sorted(lane.taken | {_tag(message) for message in lane.waiting})
        for tag in tags:
            await line.raw.basic_nack(tag, requeue=True)
        line.outstanding.difference_update(tags)
        lane.waiting.clear()
        lane.taken.clear()

    # -- taking -------------------------------------------------------------------------------------

    def _check(self) -> None:
        """A lost channel (or connection, which closes them all) ends this reader."""
        for vhost, lines in self.lines.items():
            for line in lines:
                if line.raw.is_closed:
                    raise BrokerError(f"lost a channel to {self.rabbit.where(vhost)}; unacknowledged messages "
                                      "go back to their queues", permanent=False)

    async def _take(self, max_count: int, wait_seconds: float) -> dict[PlaceRef, list[Received]]:
        self._check()
        if self.arrived is None:
            self.arrived = asyncio.Event()
        self.arrived.clear()
        taken = self._in_turn(max_count)
        if taken or wait_seconds <= 0:
            return taken
        arrival = asyncio.ensure_future(self.arrived.wait())
        closings = [line.raw.closing for lines in self.lines.values() for line in lines]
        try:
            await asyncio.wait({arrival, *closings}, timeout=wait_seconds, return_when=asyncio.FIRST_COMPLETED)
        finally:
            arrival.cancel()
            for closing in closings:
                closing.cancel()  # only stops this observer
        self._check()
        return self._in_turn(max_count)

    def _in_turn(self, max_count: int) -> dict[PlaceRef, list[Received]]:
        """What the buffers hold, the places in turn (Turns)."""
        return self.turns.serve(max_count, self.per_place, self._from_lane)

    def _from_lane(self, place: PlaceRef, count: int) -> list[Received]:
        lane = self.lanes.get(place)
        batch: list[Received] = []
        while lane is not None and lane.waiting and len(batch) < count:
            message = lane.waiting.popleft()
            lane.taken.add(_tag(message))
            batch.append(received(message))
        return batch

    # -- acknowledging and settling -----------------------------------------------------------------

    async def _ack(self, taken: dict[PlaceRef, list[int]]) -> None:
        """Every place's acks, a channel's in one go, then a passive declare of each queue: a
        queue answers it after the acks the channel sent it before (as QueueConsumer.ack), since
        basic.ack itself has no answer. One call for a whole take."""
        acked: list[tuple[_Lane, list[int]]] = []
        for place, tags in taken.items():
            lane = self.lanes.get(place) or self.gone.get(place)
            if lane is None or not lane.taken.issuperset(tags):
                raise BrokerError(f"{place.name!r} is no longer followed by this reader: its messages went back to "
                                  "the queue", permanent=False)
            if tags:
                acked.append((lane, tags))
        self._check()
        by_line: dict[_Line, list[int]] = {}
        for lane, tags in acked:
            by_line.setdefault(lane.line, []).extend(tags)
        for line, tags in by_line.items():
            await ack_on(line.raw, tags, line.outstanding)
            line.outstanding.difference_update(tags)
        for lane, _ in acked:
            if not lane.cancelled:
                await lane.line.raw.queue_declare(lane.place.name, passive=True)
        for lane, tags in acked:
            lane.taken.difference_update(tags)
            if lane.cancelled and not lane.taken:
                self.gone.pop(lane.place, None)

    async def _settled(self, place: PlaceRef) -> bool:
        """Nothing of the place here, and twice over its consumer's channel: nothing ready and
        ours the only consumer. The second declare flushes deliveries already on the wire
        (QueueConsumer._nothing_ready says why)."""
        self._check()
        lane = self.lanes.get(place)
        if lane is None:
            if place in self.gone:
                return False
            counts = await self.rabbit._counts(self._vhost(place), [place.name])
            return counts.get(place.name) == (0, 0)
        for _ in range(2):
            if lane.waiting or lane.taken or lane.cancelled:
                return False
            ok = await lane.line.raw.queue_declare(place.name, passive=True)
            if ok.message_count or ok.consumer_count != 1:
                return False
        await asyncio.sleep(0)  # let the deliveries read so far land
        return not lane.waiting

    async def _close(self) -> None:
        for lines in self.lines.values():
            for line in lines:
                if not line.channel.is_closed:
                    try:
                        await line.channel.close()
                    except Exception:  # noqa: BLE001 - closing hands everything back either way
                        pass
        self.lines.clear()
        self.lanes.clear()
        self.gone.clear()
        self.turns.keep(())


def _tag(message: DeliveredMessage) -> int:
    """A delivery's tag (a basic.deliver always has one; pamqp types it optional)."""
    return cast(int, delivery_of(message).delivery_tag)
