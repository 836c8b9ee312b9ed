"""A consumer that keeps running beside a job (the kit's ``consume`` stops after a count):
the application whose failures a replay watches."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import aio_pika

from tests.rabbitmq.kit import ACK, REJECT, RabbitKit


class StandingConsumer:
    """Consumes ``queue`` until closed; ``decide(message)`` says ACK or REJECT (requeue=False,
    so the message dead-letters). Counts what it did."""

    def __init__(self, kit: RabbitKit, queue: str, decide: Callable[[aio_pika.IncomingMessage], str]) -> None:
        self.kit = kit
        self.decide = decide
        self.acked = 0
        self.rejected = 0
        self._stop = asyncio.Event()
        self._ready = asyncio.Event()
        kit.loop.loop.call_soon_threadsafe(self._start, queue)

    def _start(self, queue: str) -> None:
        self._future = asyncio.ensure_future(self._consume(queue))

    async def _consume(self, queue: str) -> None:
        async with self.kit.connection.channel() as channel:
            await channel.set_qos(prefetch_count=10)
            q = await channel.get_queue(queue)

            async def handle(message: aio_pika.IncomingMessage) -> None:
                if self.decide(message) == ACK:
                    await message.ack()
                    self.acked += 1
                else:
                    await message.reject(requeue=False)
                    self.rejected += 1

            tag = await q.consume(handle)
            self._ready.set()
            await self._stop.wait()
            await q.cancel(tag)

    def __enter__(self) -> StandingConsumer:
        self.kit.wait_for(self._ready.is_set, "the standing consumer to start")
        return self

    def __exit__(self, *exc: object) -> None:
        self.kit.loop.loop.call_soon_threadsafe(self._stop.set)
        self.kit.wait_for(self._future.done, "the standing consumer to stop")


__all__ = ["ACK", "REJECT", "StandingConsumer"]
