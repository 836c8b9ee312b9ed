"""Hundreds of dead-letter queues made at once, for the keeper's tests at scale (issue 35).

The usual layout has one DLQ per work queue; a thousand work queues would make each round of
a test a thousand consumers' work. Here letters die the same way through one work queue: a
fanout exchange feeds it, its consumer rejects, and RabbitMQ dead-letters each message to a
direct exchange under the routing key it was published with, which names its DLQ. Every DLQ
is a real queue bound the way a real DLQ is, and every letter carries a real ``x-death``
(its origin: the work queue). Everything is durable and every message persistent, so a broker
restart loses nothing.

Declaring, publishing and counting go over one channel of the test's kit, not one per queue.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence

import aio_pika

from console.models import Broker, DeadPlace
from tests.keeper_crash import body_of, place_of
from tests.rabbitmq.kit import RabbitKit


class ManyPlaces:
    def __init__(self, kit: RabbitKit, count: int, base: str = "many") -> None:
        self.kit = kit
        self.entry = kit.name(f"{base}-in")
        self.dead = kit.name(f"{base}-dead")
        self.work = kit.name(base)
        self.dlqs = [kit.name(f"{base}{n:04d}") + ".dlq" for n in range(count)]
        kit.run(self._declare(), timeout=300)
        kit.queues += [self.work, *self.dlqs]
        kit.exchanges += [self.entry, self.dead]

    async def _declare(self) -> None:
        async with self.connection().channel() as channel:
            entry = await channel.declare_exchange(self.entry, aio_pika.ExchangeType.FANOUT, durable=True)
            dead = await channel.declare_exchange(self.dead, aio_pika.ExchangeType.DIRECT, durable=True)
            work = await channel.declare_queue(self.work, durable=True,
                                               arguments={"x-dead-letter-exchange": self.dead})
            await work.bind(entry)
            for name in self.dlqs:
                queue = await channel.declare_queue(name, durable=True)
                await queue.bind(dead, name)

    def delete(self) -> None:
        """Delete the queues and exchanges on one channel (the kit's clean-up, a channel per
        queue, would not get through a thousand in its few seconds)."""
        async def delete() -> None:
            async with self.connection().channel() as channel:
                for name in [self.work, *self.dlqs]:
                    await channel.queue_delete(name)
                for name in (self.entry, self.dead):
                    await channel.exchange_delete(name)

        self.kit.run(delete(), timeout=300)
        for name in [self.work, *self.dlqs]:
            self.kit.queues.remove(name)
        for name in (self.entry, self.dead):
            self.kit.exchanges.remove(name)

    def connection(self) -> aio_pika.abc.AbstractConnection:
        """The kit's connection (a new one after a broker restart)."""
        assert self.kit.connection is not None
        return self.kit.connection

    def places(self, broker: Broker) -> list[DeadPlace]:
        """The DLQs as places of ``broker``, made in one insert (declared by hand, as an operator
        may: discovery would also find other tests' queues on a shared broker)."""
        return DeadPlace.objects.bulk_create(
            DeadPlace(broker=broker, name=name, kind="queue", origins=[self.work]) for name in self.dlqs)

    def let_die(self, first: int, count: int, *, counted: bool = True) -> None:
        """Letters ``first`` .. ``first + count - 1`` rejected into their DLQs (``place_of``);
        with ``counted``, returns once the DLQs hold them (not while a keeper takes them)."""
        before = sum(self.depths().values()) if counted else 0

        async def publish() -> None:
            async with self.connection().channel() as channel:
                entry = await channel.get_exchange(self.entry)
                numbers = range(first, first + count)
                for start in range(0, count, 500):
                    await asyncio.gather(*(
                        entry.publish(aio_pika.Message(body_of(n), message_id=body_of(n).decode(), delivery_mode=2),
                                      self.dlqs[place_of(n, len(self.dlqs))])
                        for n in numbers[start:start + 500]))

        self.kit.run(publish(), timeout=300)
        self.kit.reject_all(self.work, count)
        if counted:
            self.kit.wait_for(lambda: sum(self.depths().values()) == before + count,
                              f"{count} letters in the DLQs", seconds=60)

    def depths(self, names: Sequence[str] | None = None) -> dict[str, int]:
        return {name: ready for name, (ready, _) in self._counts(names).items()}

    def consumers(self, names: Sequence[str] | None = None) -> dict[str, int]:
        return {name: consumers for name, (_, consumers) in self._counts(names).items()}

    def _counts(self, names: Sequence[str] | None) -> dict[str, tuple[int, int]]:
        """(ready messages, consumers) per DLQ, by passive declares on one channel."""
        async def counts() -> dict[str, tuple[int, int]]:
            found = {}
            async with self.connection().channel() as channel:
                for name in names or self.dlqs:
                    result = (await channel.declare_queue(name, passive=True)).declaration_result
                    found[name] = (result.message_count or 0, result.consumer_count or 0)
            return found

        return self.kit.run(counts(), timeout=120)

    def wait_unconsumed(self, seconds: float = 30) -> None:
        """Until no DLQ has a consumer (a killed keeper's connection is gone)."""
        deadline = time.monotonic() + seconds
        while any(self.consumers().values()):
            assert time.monotonic() < deadline, "the killed keeper's consumers never went"
            time.sleep(0.1)
