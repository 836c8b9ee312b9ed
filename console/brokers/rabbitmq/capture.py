"""Capture from a RabbitMQ queue: consume with a prefetch and manual acks, in batches.

The consumer runs on the adapter's event loop; deliveries wait in a buffer until the caller
asks for a batch. Nothing is acknowledged until the caller says its copies are committed;
closing the channel hands every unacknowledged message back to the queue (flagged
``redelivered``), which is what makes a crash between commit and ack safe.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, cast

from aiormq.abc import DeliveredMessage
from pamqp import commands as spec
from pamqp.body import ContentBody
from pamqp.header import ContentHeader

from console.brokers.base import BrokerError, CaptureSession, PlaceRef, Received
from console.brokers.rabbitmq.messages import decode_properties
from console.brokers.rabbitmq.xdeath import envelope_from_headers

#: How long a batch in hand waits for one more message before it is handed over.
LINGER_SECONDS = 0.05


def received(message: DeliveredMessage) -> Received:
    """A delivered message as the adapter boundary carries it, with its x-death envelope."""
    properties, headers = decode_properties(message.header.properties)
    delivery = delivery_of(message)
    return Received(
        token=delivery.delivery_tag,
        body=bytes(message.body),
        headers=headers,
        properties=properties,
        envelope=envelope_from_headers(headers),
        redelivered=bool(delivery.redelivered),
        message_id=str(properties.get("message_id", "")),
    )


def delivery_of(message: DeliveredMessage) -> spec.Basic.Deliver:
    """The basic.deliver a consumer's message came with (aiormq types it as any of the four
    methods that carry a message)."""
    return cast(spec.Basic.Deliver, message.delivery)


class QueueConsumer:
    """The async half: one channel, one consumer, a buffer of deliveries.

    The consumer's prefetch is three of the batches the caller asks for, at most ``cap``: the
    caller asks for fewer messages at a time when they are large (console.brokers.batch_sizing), so
    that the messages RabbitMQ sends ahead stay bounded in bytes too (it ignores a byte limit).
    RabbitMQ fixes a consumer's prefetch when it starts, so the consumer starts with the first
    batch asked for, and starts again when the batches grow or shrink twofold.
    """

    def __init__(self, channel: Any, raw: Any, queue: str, cap: int, where: str) -> None:
        self.channel = channel  # aio_pika channel
        self.raw = raw  # its aiormq channel
        self.queue = queue
        self.cap = max(1, cap)
        self.prefetch = 0
        self.tag: str | None = None
        self.where = where
        self.buffer: asyncio.Queue[DeliveredMessage] = asyncio.Queue()
        self.unacked: set[int] = set()

    @classmethod
    async def start(cls, connection: Any, queue: str, cap: int, where: str) -> QueueConsumer:
        channel = await connection.channel(publisher_confirms=False)
        raw = await channel.get_underlay_channel()
        consumer = cls(channel, raw, queue, cap, where)
        Deliveries(raw, consumer.buffer.put_nowait)
        return consumer

    async def _consume_for(self, max_count: int) -> None:
        """Consume with a prefetch of three batches of ``max_count``, unless the one running is
        within a factor of two of that. Deliveries sent before a cancel still reach the buffer
        (they come before its answer), and stay ours to acknowledge."""
        wanted = min(self.cap, 3 * max(1, max_count))
        if self.tag is not None and self.prefetch / 2 < wanted < 2 * self.prefetch:
            return
        if self.tag is not None:
            await self.raw.basic_cancel(self.tag)
            self.tag = None
        await self.raw.basic_qos(prefetch_count=wanted)
        self.tag = (await self.raw.basic_consume(self.queue, self._deliver, no_ack=False)).consumer_tag
        self.prefetch = wanted

    async def _deliver(self, message: DeliveredMessage) -> None:
        """The consumer aiormq calls for a delivery Deliveries handed back to it (its frames
        out of order: aiormq then closes the channel)."""
        self.buffer.put_nowait(message)

    def _lost(self) -> Exception:
        """Why the channel is gone. A message nested too deep to decode closed it with a
        RecursionError, which the adapter explains (and which reading again would only repeat)."""
        closing = self.raw.closing
        if closing.done() and not closing.cancelled():
            reason = closing.exception()
            if isinstance(reason, RecursionError) or isinstance(getattr(reason, "__cause__", None), RecursionError):
                lost: Exception = reason
                return lost
        return BrokerError(f"the channel to {self.where} closed during capture; unacknowledged messages "
                           "go back to the queue", permanent=False)

    async def next_batch(self, max_count: int, wait_seconds: float) -> list[Received]:
        if self.raw.is_closed:
            raise self._lost()
        await self._consume_for(max_count)
        batch = await self._take(max_count, wait_seconds)
        if not batch:
            # An empty batch tells the caller the queue is drained; make sure it is not a
            # connection that died a moment ago (a round trip fails if it did).
            await self.raw.queue_declare(self.queue, passive=True)
        return batch

    async def _take(self, max_count: int, wait_seconds: float) -> list[Received]:
        batch: list[Received] = []
        while len(batch) < max_count:
            if self.raw.is_closed:
                raise self._lost()
            if self.buffer.empty():
                if len(self.unacked) >= self.prefetch:
                    break  # the broker sends nothing more until we ack
                if batch:
                    # Part of a batch in hand: wait a moment for more, else hand it over. Asking
                    # the broker here would cost two round trips for each message of a stream
                    # of deaths that the consumer keeps up with (a kept place); whether the
                    # queue is empty is asked when the next batch starts empty.
                    message = await self._arrival(LINGER_SECONDS)
                    if message is None:
                        break
                else:
                    if await self._nothing_ready():
                        break
                    message = await self._arrival(wait_seconds)
                    if message is None:
                        break  # nothing arrived for wait_seconds
            else:
                message = self.buffer.get_nowait()
            self.unacked.add(cast(int, delivery_of(message).delivery_tag))  # a delivery always has its tag
            batch.append(received(message))
        return batch

    async def _arrival(self, seconds: float) -> DeliveredMessage | None:
        """The next delivered message, waiting up to ``seconds``; None when none came."""
        getter = asyncio.ensure_future(self.buffer.get())
        closing = self.raw.closing
        done, _ = await asyncio.wait({getter, closing}, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
        closing.cancel()  # only stops this observer
        if getter in done:
            return getter.result()
        getter.cancel()
        if closing in done:
            raise self._lost()
        return None

    async def _nothing_ready(self) -> bool:
        """True when the queue has no ready message and none is on its way to us.

        A passive declare counts ready messages only; one already taken from the queue may
        still be on the wire. RabbitMQ's channel forwards those before it answers the next
        command, so a second passive declare flushes them into the buffer. Getting this wrong
        would only end a capture early (the message goes back to the queue), never lose one.
        """
        for _ in range(2):
            ok = await self.raw.queue_declare(self.queue, passive=True)
            if ok.message_count:
                return False
        await asyncio.sleep(0)  # let the consumer callbacks of frames read so far run
        return self.buffer.empty()

    async def ack(self, tags: Sequence[int]) -> None:
        if not tags:
            return
        if self.raw.is_closed:
            raise self._lost()
        await ack_on(self.raw, tags, self.unacked)
        # basic.ack has no answer: a broker stopping right after it was written could drop it,
        # and the caller would forget the copies it must match when the messages come back
        # (a batch stored twice). The queue answers a passive declare after the acks the
        # channel sent it before, so once this returns the queue has them (as NATS's ack_sync
        # and ActiveMQ's committed ack do).
        await self.raw.queue_declare(self.queue, passive=True)
        self.unacked.difference_update(tags)

    async def close(self) -> None:
        if not self.channel.is_closed:
            await self.channel.close()


async def ack_on(raw: Any, tags: Sequence[int], outstanding: set[int]) -> None:
    """Acknowledge ``tags`` on the channel ``raw``: one ``multiple`` ack when they are exactly
    what it has outstanding up to the highest of them, else one each."""
    highest = max(tags)
    if set(tags) == {tag for tag in outstanding if tag <= highest}:
        await raw.basic_ack(highest, multiple=True)
    else:
        for tag in tags:
            await raw.basic_ack(tag)


class Deliveries:
    """A channel's deliveries made into messages as the connection reads their frames, and
    handed to ``take`` there and then.

    aiormq puts every frame it reads into its channel's queue, where the channel's reader task
    takes it: for a delivery, three frames through the queue, three wake-ups of that task and
    the awaits of its content reader, about a fifth of a capture reader's CPU. This takes the
    queue's ``put`` (the one the connection's reader calls; aiormq's private bookkeeping: the
    pin in requirements.txt covers it): ``basic.deliver``, its content header and body frames
    become one DeliveredMessage, exactly as aiormq's ``_read_content`` makes it; every other
    frame goes to the queue as before. A delivery's frames come in order on its channel (AMQP
    does not interleave them); frames that break that order go to the queue as they came, and
    aiormq fails the channel for them as it did. A message handed over here reaches the
    consumer before any frame that follows it on the wire, a ``basic.cancel-ok`` or the
    answer to a passive declare included.
    """

    def __init__(self, raw: Any, take: Callable[[DeliveredMessage], None]) -> None:
        self._raw = raw
        self._take = take
        self._queue = raw.frames.put  # the queue's own (it holds ten frames, then waits)
        self._held: list[tuple[Any, Any]] = []  # the frames of the delivery under way
        self._header: ContentHeader | None = None
        self._size = 0
        raw.frames.put = self.put

    async def put(self, item: tuple[Any, Any]) -> None:
        frame = item[1]
        if not self._held:
            if type(frame) is spec.Basic.Deliver:
                self._held.append(item)
            else:
                await self._queue(item)
            return
        self._held.append(item)
        if self._header is None:
            if type(frame) is not ContentHeader:
                return await self._hand_back()
            self._header = frame
        elif type(frame) is ContentBody:
            self._size += len(frame.value)
        else:
            return await self._hand_back()
        if self._size >= self._header.body_size:
            body = b"".join(held[1].value for held in self._held[2:])
            self._take(DeliveredMessage(delivery=self._held[0][1], header=self._header, body=body,
                                        channel=self._raw))
            self._reset()

    async def _hand_back(self) -> None:
        held, self._held = self._held, []
        self._reset()
        for item in held:
            await self._queue(item)

    def _reset(self) -> None:
        self._held, self._header, self._size = [], None, 0


class RabbitCapture(CaptureSession):
    """The sync half, handed to the job runner."""

    def __init__(self, run: Callable[[Coroutine[Any, Any, Any], float], Any], consumer: QueueConsumer,
                 place: PlaceRef) -> None:
        # ``run(coro, seconds)`` runs on the adapter's loop, allowing ``seconds`` beyond its
        # usual operation timeout.
        self._run = run
        self._consumer = consumer
        self.place = place
        self._closed = False

    def next_batch(self, max_count: int, wait_seconds: float) -> list[Received]:
        if self._closed:
            raise BrokerError("this capture session is closed", permanent=True)
        batch: list[Received] = self._run(self._consumer.next_batch(max_count, wait_seconds), wait_seconds)
        return batch

    def ack(self, batch: Sequence[Received]) -> None:
        self._run(self._consumer.ack([message.token for message in batch]), 0)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        try:
            self._run(self._consumer.close(), 0)
        except BrokerError:
            pass  # a channel that is gone has handed its messages back already
