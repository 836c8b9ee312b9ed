"""A blocking helper over aio-pika and the management API for the RabbitMQ tests.

It plays the applications around the console: declares queues and exchanges (named with a
per-test suffix, deleted afterwards), publishes, and runs consumers that really reject, nack
and requeue, so that messages die the way they do in production.
"""

from __future__ import annotations

import asyncio
import re
import struct
import time
import uuid
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import aio_pika
import httpx

from console.brokers.asyncloop import LoopThread

AMQP_URL = "amqp://127.0.0.1:5672/%2F"
MANAGEMENT_URL = "http://127.0.0.1:15672"
USER, PASSWORD = "guest", "guest"

# What a consumer does with one delivery; ("park", queue) republishes a copy, headers and all,
# to that queue and acks (the "parking lot" end of a retry loop).
ACK, REJECT, REQUEUE, PARK = "ack", "reject", "requeue", "park"


class RabbitKit:
    def __init__(self, port: int = 5672) -> None:
        self.suffix = uuid.uuid4().hex[:8]
        self.port = port
        self.loop = LoopThread("rabbit-kit")
        self.connection = None
        self.reconnect()
        self.http = httpx.Client(base_url=MANAGEMENT_URL, auth=(USER, PASSWORD), timeout=10)
        self.queues: list[str] = []
        self.exchanges: list[str] = []
        self.policies: list[str] = []

    def reconnect(self) -> None:
        """Connect (again, after a broker restart closed the connection)."""
        self.connection = self.run(aio_pika.connect(host="127.0.0.1", port=self.port, login=USER, password=PASSWORD,
                                                    timeout=5))

    def run(self, coro, timeout: float = 30) -> Any:
        return self.loop.run(coro, timeout)

    def name(self, base: str) -> str:
        """A name no other test uses: ``base-<suffix>``."""
        return f"{base}-{self.suffix}"

    # -- topology -------------------------------------------------------------------------------

    def queue(self, name: str, arguments: dict | None = None, *, quorum: bool = False, durable: bool = False) -> str:
        arguments = dict(arguments or {})
        if quorum:
            arguments["x-queue-type"] = "quorum"

        async def declare() -> None:
            async with self.connection.channel() as channel:
                await channel.declare_queue(name, durable=quorum or durable, arguments=arguments)

        self.run(declare())
        self.queues.append(name)
        return name

    def exchange(self, name: str, kind: str = "direct") -> str:
        async def declare() -> None:
            async with self.connection.channel() as channel:
                await channel.declare_exchange(name, kind)

        self.run(declare())
        self.exchanges.append(name)
        return name

    def bind(self, queue: str, exchange: str, routing_key: str = "") -> None:
        async def bind() -> None:
            async with self.connection.channel() as channel:
                q = await channel.get_queue(queue)
                await q.bind(exchange, routing_key)

        self.run(bind())

    def delete_queue(self, name: str) -> None:
        async def delete() -> None:
            async with self.connection.channel() as channel:
                await channel.queue_delete(name)

        self.run(delete())

    def policies_on(self, definitions: dict[str, dict]) -> None:
        """Apply one policy per queue ({queue: definition}) and wait until the management API
        shows each on its queue (it refreshes queue facts every few seconds: set them together)."""
        for queue, definition in definitions.items():
            name = f"dlo-test-{queue}"
            self.http.put(f"/api/policies/%2F/{quote(name, safe='')}", json={
                "pattern": f"^{re.escape(queue)}$", "definition": definition, "apply-to": "queues", "priority": 100,
            }).raise_for_status()
            self.policies.append(name)
        for queue in definitions:
            self.wait_for(
                lambda: self.http.get(f"/api/queues/%2F/{quote(queue, safe='')}").json().get("policy")  # noqa: B023
                == f"dlo-test-{queue}", f"the policy on {queue}")  # noqa: B023 - waited for before the loop moves on

    # -- messages -------------------------------------------------------------------------------

    def publish(self, routing_key: str, body: bytes, *, exchange: str = "", headers: dict | None = None,
                **properties: Any) -> None:
        """Publish with a confirm (mandatory: the test wants to know it was routed)."""
        async def publish() -> None:
            async with self.connection.channel() as channel:
                target = channel.default_exchange if not exchange else await channel.get_exchange(exchange)
                await target.publish(aio_pika.Message(body, headers=headers or {}, **properties), routing_key)

        self.run(publish())

    def publish_many(self, queue: str, messages: list[aio_pika.Message], window: int = 500) -> None:
        """Publish many messages to a queue on one channel, ``window`` confirms at a time."""
        async def publish() -> None:
            async with self.connection.channel() as channel:
                for start in range(0, len(messages), window):
                    await asyncio.gather(*(channel.default_exchange.publish(message, queue)
                                           for message in messages[start:start + window]))

        self.run(publish(), timeout=120)

    def consume(self, queue: str, decide: Callable[[aio_pika.IncomingMessage], Any], count: int) -> None:
        """Run a consumer (prefetch 1) for ``count`` deliveries; ``decide`` says ack, reject
        (requeue=False, so the message dead-letters), requeue (nack with requeue) or park."""
        async def consume() -> None:
            async with self.connection.channel() as channel:
                await channel.set_qos(prefetch_count=1)
                q = await channel.get_queue(queue)
                handled = 0
                async with q.iterator() as deliveries:
                    async for message in deliveries:
                        action = decide(message)
                        if isinstance(action, tuple) and action[0] == PARK:
                            copy = aio_pika.Message(message.body, headers=message.headers,
                                                    content_type=message.content_type)
                            await channel.default_exchange.publish(copy, action[1])
                            await message.ack()
                        elif action == ACK:
                            await message.ack()
                        elif action == REJECT:
                            await message.reject(requeue=False)
                        else:
                            await message.nack(requeue=True)
                        handled += 1
                        if handled >= count:
                            break

        self.run(consume())

    def reject(self, queue: str, count: int = 1) -> None:
        self.consume(queue, lambda m: REJECT, count)

    def reject_all(self, queue: str, count: int) -> None:
        """Reject ``count`` deliveries without requeue, many at a time (one ``basic.nack``
        with ``multiple`` per prefetch window), so that they dead-letter in bulk."""
        async def reject() -> None:
            async with self.connection.channel() as channel:
                await channel.set_qos(prefetch_count=500)
                q = await channel.get_queue(queue)
                handled = 0
                async with q.iterator() as deliveries:
                    async for message in deliveries:
                        handled += 1
                        if handled % 500 == 0 or handled >= count:
                            await message.nack(multiple=True, requeue=False)
                        if handled >= count:
                            break

        self.run(reject(), timeout=120)

    def depth(self, queue: str) -> int:
        """Ready messages, by passive declare."""
        async def depth() -> int:
            async with self.connection.channel() as channel:
                q = await channel.declare_queue(queue, passive=True)
                return q.declaration_result.message_count

        return self.run(depth())

    def consumers(self, queue: str) -> int:
        """Consumers reading the queue now, by passive declare."""
        async def consumers() -> int:
            async with self.connection.channel() as channel:
                q = await channel.declare_queue(queue, passive=True)
                return q.declaration_result.consumer_count

        return self.run(consumers())

    def wait_depth(self, queue: str, count: int) -> None:
        self.wait_for(lambda: self.depth(queue) == count, f"{count} messages in {queue}")

    def drain(self, queue: str) -> list[aio_pika.IncomingMessage]:
        """Take (and ack) every message in the queue."""
        async def drain() -> list:
            taken = []
            async with self.connection.channel() as channel:
                q = await channel.get_queue(queue)
                while (message := await q.get(fail=False)) is not None:
                    await message.ack()
                    taken.append(message)
            return taken

        return self.run(drain(), timeout=120)

    def take_all(self, queue: str, header: str, *, quiet_seconds: float = 2.0) -> list[tuple[str, Any]]:
        """Consume every message of a big queue (auto-ack, a large prefetch: ``drain`` asks for
        one message at a time): (message id, value of ``header``) of each, until none came for
        ``quiet_seconds`` and the queue is empty."""
        async def take() -> list[tuple[str, Any]]:
            taken: list[tuple[str, Any]] = []
            async with self.connection.channel() as channel:
                await channel.set_qos(prefetch_count=5000)
                q = await channel.get_queue(queue)
                async with q.iterator(no_ack=True) as messages:
                    while True:
                        try:
                            message = await asyncio.wait_for(messages.__anext__(), quiet_seconds)
                        except TimeoutError:
                            if (await channel.declare_queue(queue, passive=True)).declaration_result.message_count:
                                continue
                            return taken
                        taken.append((message.message_id, (message.headers or {}).get(header)))

        return self.run(take(), timeout=600)

    # -- the management API ---------------------------------------------------------------------

    def kill_connection(self, connection_name: str) -> None:
        """Close a client's connection from the broker side, as a broker restart would."""
        def find() -> str | None:
            for row in self.http.get("/api/connections", params={"columns": "name,client_properties"}).json():
                if (row.get("client_properties") or {}).get("connection_name") == connection_name:
                    return row["name"]
            return None

        self.wait_for(lambda: find() is not None, f"connection {connection_name}")
        self.http.delete(f"/api/connections/{quote(find(), safe='')}", headers={"X-Reason": "test"}).raise_for_status()

    @staticmethod
    def wait_for(condition: Callable[[], bool], what: str, seconds: float = 15) -> None:
        """Poll until the broker reaches a state (dead-lettering and TTL are asynchronous)."""
        deadline = time.monotonic() + seconds
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"waited {seconds}s for {what}")
            time.sleep(0.05)

    @staticmethod
    def eventually(read: Callable[[], Any], expected: Any, seconds: float = 15) -> Any:
        """What ``read`` returns once it equals ``expected``, or its last answer when the time is
        up (the caller asserts on it). The management API's queue listings may lag a queue's own
        page by a few seconds: a policy just seen on the queue is told in a listing a little later."""
        deadline = time.monotonic() + seconds
        while (told := read()) != expected and time.monotonic() < deadline:
            time.sleep(0.1)
        return told

    def close(self) -> None:
        async def cleanup() -> None:
            for name in self.queues:
                try:
                    async with self.connection.channel() as channel:
                        await channel.queue_delete(name)
                except Exception:
                    pass
            for name in self.exchanges:
                try:
                    async with self.connection.channel() as channel:
                        await channel.exchange_delete(name)
                except Exception:
                    pass
            await self.connection.close()

        for name in self.policies:
            self.http.delete(f"/api/policies/%2F/{quote(name, safe='')}")
        self.http.close()
        self.loop.stop(cleanup())



class _Proxy:
    """A TCP proxy in front of the local RabbitMQ; ``_serve`` says what it does to a connection."""

    def __init__(self, kit: RabbitKit) -> None:
        self._server = kit.run(asyncio.start_server(self._serve, "127.0.0.1", 0))
        self.port = self._server.sockets[0].getsockname()[1]
        self._kit = kit

    async def _serve(self, client_reader, client_writer) -> None:
        raise NotImplementedError

    @staticmethod
    async def _pass_through(reader, writer) -> None:
        """Everything ``reader`` gets, written on, until either side is gone."""
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            writer.transport.abort()

    def close(self) -> None:
        async def stop() -> None:
            self._server.close()

        self._kit.run(stop())


class CuttingProxy(_Proxy):
    """A TCP proxy in front of RabbitMQ that drops the connection, both ways at once, after the
    client has sent ``cut_after`` bytes: a broker going away at an exact point of a transfer.
    It cuts once; later connections pass through."""

    def __init__(self, kit: RabbitKit, cut_after: int) -> None:
        self.cut_after: int | None = cut_after
        self.sent = 0
        self.cuts = 0
        super().__init__(kit)

    async def _serve(self, client_reader, client_writer) -> None:
        broker_reader, broker_writer = await asyncio.open_connection("127.0.0.1", 5672)

        def cut() -> None:
            self.cut_after = None
            self.cuts += 1
            client_writer.transport.abort()
            broker_writer.transport.abort()

        async def to_broker() -> None:
            try:
                while data := await client_reader.read(65536):
                    broker_writer.write(data)
                    await broker_writer.drain()
                    if self.cut_after is not None:
                        self.sent += len(data)
                        if self.sent >= self.cut_after:
                            cut()
                            return
            except (ConnectionError, OSError):
                pass
            finally:
                broker_writer.transport.abort()

        await asyncio.gather(to_broker(), self._pass_through(broker_reader, client_writer))


class AckDroppingProxy(_Proxy):
    """A TCP proxy in front of RabbitMQ that swallows the client's first ``basic.ack`` and drops
    the connection both ways at that moment: a broker that goes away with an acknowledgement
    written by the client but never taken. Later connections pass through."""

    ACK = (60, 80)  # basic.ack: class and method

    def __init__(self, kit: RabbitKit) -> None:
        self.dropped = 0
        super().__init__(kit)

    async def _serve(self, client_reader, client_writer) -> None:
        broker_reader, broker_writer = await asyncio.open_connection("127.0.0.1", 5672)

        async def to_broker() -> None:
            try:
                broker_writer.write(await client_reader.readexactly(8))  # the protocol header
                while True:
                    head = await client_reader.readexactly(7)
                    kind, _, size = struct.unpack(">BHI", head)
                    rest = await client_reader.readexactly(size + 1)
                    if kind == 1 and struct.unpack(">HH", rest[:4]) == self.ACK and not self.dropped:
                        self.dropped += 1
                        client_writer.transport.abort()
                        broker_writer.transport.abort()
                        return
                    broker_writer.write(head + rest)
                    await broker_writer.drain()
            except (ConnectionError, OSError, asyncio.IncompleteReadError):
                pass
            finally:
                broker_writer.transport.abort()

        await asyncio.gather(to_broker(), self._pass_through(broker_reader, client_writer))
