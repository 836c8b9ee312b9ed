"""Publishing with ``mandatory`` and publisher confirms, in windows of outstanding confirms.

Why not ``aio_pika.Exchange.publish``: aiormq gives every message without a ``message_id`` a
random one (a replayed letter must leave exactly as it came), and it pairs a ``basic.return``
with its publish by ``message_id``, which mixes up two letters that share one. So this module
writes the publish frames itself on aiormq's channel (confirm futures registered where
aiormq's own acks and nacks resolve them) and pairs each return with the oldest outstanding
publish of the same content. RabbitMQ sends a message's ``basic.return`` before its
``basic.ack``, so a returned publish is always still outstanding when its return arrives.
"""

from __future__ import annotations

import asyncio
import logging
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aiormq.abc import ChannelFrame, DeliveredMessage
from aiormq.channel import Returning
from aiormq.exceptions import (
    ChannelAccessRefused,
    ChannelNotFoundEntity,
    ChannelPreconditionFailed,
    DeliveryError,
)
from pamqp import commands as spec

from console.brokers.base import BrokerError, Outgoing, PublishResult
from console.brokers.rabbitmq.encoding import content_header, publish_frames
from console.brokers.rabbitmq.messages import encode_properties

log = logging.getLogger(__name__)

MAX_ROUTING_KEY_BYTES = 255

#: Channel errors that trying again cannot mend (no permission, a refused message).
REFUSALS = (ChannelAccessRefused, ChannelNotFoundEntity, ChannelPreconditionFailed)


#: Most publishes written to the socket in one go.
WRITE_CHUNK = 64


class _Window:
    """Outstanding confirms allowed; taken in chunks, given back one confirm at a time."""

    def __init__(self, size: int) -> None:
        self.free = size
        self._changed = asyncio.Event()

    def release(self, _: object = None) -> None:
        self.free += 1
        self._changed.set()

    async def take(self, most: int, timeout: float) -> int:
        """Wait for at least one free slot (TimeoutError after ``timeout``); take up to ``most``."""
        while self.free <= 0:
            self._changed.clear()
            await asyncio.wait_for(self._changed.wait(), timeout)
        taken = min(self.free, most)
        self.free -= taken
        return taken


@dataclass
class _Pending:
    tag: int
    index: int
    out: Outgoing
    properties: spec.Basic.Properties
    confirmation: asyncio.Future[Any]


class ConfirmWindowPublisher:
    """Publishes through the default exchange on one confirm-mode aiormq channel."""

    def __init__(self, channel: Any, *, vhost: str, username: str, timeout: float) -> None:
        self.channel = channel  # aiormq.Channel, opened with publisher confirms
        self.vhost = vhost
        self.username = username
        self.timeout = timeout
        self._outstanding: dict[int, _Pending] = {}
        self._sending = asyncio.Lock()  # one publish's messages go out before the next one's
        channel._on_return_frame = self._on_return_frame  # see the module docstring
        channel.closing.add_done_callback(self._fail_outstanding)

    async def publish(self, messages: Sequence[tuple[int, Outgoing]], window: int) -> dict[int, PublishResult]:
        """Results keyed by the index given with each message.

        The window slides: new publishes go out as soon as outstanding ones are confirmed, so
        the broker never idles between windows; those that fit are written to the socket
        together (up to WRITE_CHUNK at a time), one write and one drain for many messages.
        """
        results: dict[int, PublishResult] = {}
        ready: list[tuple[int, Outgoing, spec.Basic.Properties, bytes]] = []
        for index, out in messages:
            prepared, refusal = self._prepare(out)
            if prepared is None:
                results[index] = PublishResult(out.key, False, refusal)
            else:
                ready.append((index, out, *prepared))
        slots = _Window(max(1, window))
        sent: list[_Pending] = []
        async with self._sending:  # a publish made meanwhile goes out after this one
            while len(sent) < len(ready) and not self.channel.is_closed:
                try:
                    free = await slots.take(min(WRITE_CHUNK, len(ready) - len(sent)), self.timeout)
                except TimeoutError:
                    raise self._stalled(len(sent)) from None
                chunk = await self._send(ready[len(sent):len(sent) + free])
                for pending in chunk:
                    pending.confirmation.add_done_callback(slots.release)
                sent.extend(chunk)
        await self._wait(sent)  # says why, when the channel closed before all went out
        if len(sent) < len(ready):  # closed before this publish's turn (a publish before it failed)
            raise BrokerError(f"the channel to vhost {self.vhost!r} closed before the publishes went out",
                              permanent=False)
        for pending in sent:
            results[pending.index] = self._result(pending)
        return results

    def _stalled(self, sent: int) -> BrokerError:
        return BrokerError(
            f"RabbitMQ confirmed none of the outstanding publishes within {self.timeout:.0f}s after {sent} "
            f"were sent on vhost {self.vhost!r} (is a resource alarm blocking publishers?)", permanent=False,
        )

    def _prepare(self, out: Outgoing) -> tuple[tuple[spec.Basic.Properties, bytes] | None, str]:
        """The message's properties and its content header frame, or why it is refused here:
        messages RabbitMQ would answer by closing the channel (and so failing the whole window),
        and those that cannot be written, never go out."""
        if len(out.destination.encode("utf-8")) > MAX_ROUTING_KEY_BYTES:
            return None, f"queue name longer than {MAX_ROUTING_KEY_BYTES} bytes: {out.destination[:60]!r}..."
        user_id = out.properties.get("user_id")
        if user_id not in (None, self.username):
            return None, (f"its user_id {user_id!r} differs from the console's user {self.username!r}; "
                          "RabbitMQ refuses such a publish")
        try:
            properties = encode_properties(out.properties, out.headers)
            return (properties, content_header(self.channel.number, properties, len(out.body))), ""
        except (ValueError, TypeError, OverflowError, struct.error) as exc:
            return None, f"its properties cannot be encoded: {exc}"

    async def _send(self, chunk: list[tuple[int, Outgoing, spec.Basic.Properties, bytes]]) -> list[_Pending]:
        channel = self.channel
        frames: list[bytes] = []
        sent: list[_Pending] = []
        async with channel.lock:
            for index, out, properties, header in chunk:
                channel.delivery_tag += 1
                confirmation = channel.loop.create_future()  # failed by _fail_outstanding on close
                channel.confirmations[channel.delivery_tag] = confirmation
                pending = _Pending(channel.delivery_tag, index, out, properties, confirmation)
                self._outstanding[pending.tag] = pending
                sent.append(pending)
                frames.append(publish_frames(channel.number, out.destination, header, out.body,
                                             channel.max_content_size))
            drained = channel.create_future()
            await channel.write_queue.put(ChannelFrame(payload=b"".join(frames), should_close=False,
                                                       drain_future=drained))
        await drained
        return sent

    async def _wait(self, sent: list[_Pending]) -> None:
        if not sent:
            return
        try:
            async with asyncio.timeout(self.timeout):
                await asyncio.gather(*(p.confirmation for p in sent), return_exceptions=True)
        except TimeoutError:
            raise BrokerError(
                f"RabbitMQ confirmed none of the last {len(sent)} publishes within {self.timeout:.0f}s "
                f"on vhost {self.vhost!r} (is a resource alarm blocking publishers?)", permanent=False,
            ) from None
        for pending in sent:
            self._outstanding.pop(pending.tag, None)
            if pending.confirmation.cancelled():
                raise BrokerError(f"the channel to vhost {self.vhost!r} closed before RabbitMQ confirmed "
                                  "the publishes", permanent=False)
            exc = pending.confirmation.exception()
            if isinstance(exc, REFUSALS):
                raise BrokerError(f"RabbitMQ closed the channel to vhost {self.vhost!r}: {exc}", permanent=True)
            if exc is not None and not isinstance(exc, DeliveryError):
                raise BrokerError(f"the connection to vhost {self.vhost!r} was lost before RabbitMQ confirmed "
                                  f"the publishes: {exc!r}", permanent=False)

    def _fail_outstanding(self, closing: asyncio.Future[Any]) -> None:
        """The channel closed: its unconfirmed publishes fail with the reason it closed.

        The confirms are plain futures, not aiormq's (which it fails itself on close): each of
        those registers itself and a callback with the channel and the connection, a cost that
        was a quarter of the publishing thread's time.
        """
        reason = None if closing.cancelled() else closing.exception()
        for pending in self._outstanding.values():
            if pending.confirmation.done():
                continue
            if reason is None:
                pending.confirmation.cancel()
            else:
                pending.confirmation.set_exception(reason)
                pending.confirmation.exception()  # read here: asyncio logs unread ones

    def _result(self, pending: _Pending) -> PublishResult:
        out = pending.out
        exc = pending.confirmation.exception()
        if isinstance(exc, DeliveryError):
            return PublishResult(out.key, False, f"RabbitMQ refused it (basic.nack) for queue "
                                                 f"{out.destination!r} on vhost {self.vhost!r}")
        if isinstance(pending.confirmation.result(), DeliveredMessage):
            return PublishResult(out.key, False, f"no queue {out.destination!r} on vhost {self.vhost!r}")
        return PublishResult(out.key, True)

    async def _on_return_frame(self, frame: spec.Basic.Return) -> None:
        """Stands in for aiormq's handler on this channel: read the returned message, find its
        publish, and let aiormq ignore the ack that follows."""
        channel = self.channel
        header = await channel._Channel__get_content_header()
        message = await channel._read_content(frame, header)
        pending = self._match(frame.routing_key, message)
        if pending is None:
            log.error("basic.return for routing key %r matches no outstanding publish", frame.routing_key)
            return
        channel.confirmations.pop(pending.tag, None)
        channel.confirmations[pending.tag] = Returning()
        if not pending.confirmation.done():
            pending.confirmation.set_result(message)

    def _match(self, routing_key: str | None, message: DeliveredMessage) -> _Pending | None:
        returned = message.header.properties
        for pending in sorted(self._outstanding.values(), key=lambda p: p.tag):
            if pending.confirmation.done() or pending.out.destination != routing_key:
                continue
            if pending.out.body == message.body and _same_identity(pending.properties, returned):
                return pending
        return None


def _same_identity(sent: spec.Basic.Properties, returned: spec.Basic.Properties) -> bool:
    """Enough of the properties to tell apart two publishes with the same body."""
    return (
        sent.message_id == returned.message_id
        and sent.correlation_id == returned.correlation_id
        and _keys(sent.headers) == _keys(returned.headers)
    )


def _keys(headers: Mapping[str, Any] | None) -> set[str]:
    return set(headers or {})
