"""Kept places on the four local brokers for benchmarks/keeper.py, each made, discovered through
the console's own ``do_discover``, made to receive letters one at a time, and cleaned up.

Every letter carries the moment it died, so death to custody is its ``captured_at`` less that
moment: in the message id on RabbitMQ (``<prefix>-<serial>-<ns>``, as the stream part has
always done), in the header ``bench-died-ns`` elsewhere (``died_ns`` reads either).

How each broker lets a letter die cheaply, at a known moment:

- **RabbitMQ**: an origin queue with ``x-message-ttl`` 0 dead-letters each message into its DLQ
  as it arrives (reason ``expired``); the place is the DLQ. Set-up declares both queues of every
  place over one channel.
- **NATS JetStream**: one stream, a durable pull consumer per place (filtered to a subject of its
  own, ``max_deliver`` 3); a letter is published to the place's subject, fetched by the
  benchmark's worker and terminated (``AckTerm``): the server's MSG_TERMINATED advisory is what
  the console reads. The header holds the moment of publishing, a few milliseconds before the
  term, so NATS latencies are over-stated by that gap (``term_gaps`` measures it).
- **Redis Streams**: a dead stream per place (``...:dlq``, found by its name; made empty by an
  XADD and an XDEL); the death is a worker XADDing the poison entry with the common pattern's
  fields (``orig_stream``, ``orig_id``, ``group``, ``deliveries``, ``error``).
- **ActiveMQ**: the individual DLQ ``ActiveMQ.DLQ.Queue.<name>`` of each place, named to the
  console through the broker's ``dead_places`` option (STOMP cannot list queues); a persistent
  message sent straight into it is the death. STOMP cannot delete a queue: clean-up drains
  them and leaves them, empty, on the broker.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from benchmarks import broker_bench as bench

NATS_URL = "nats://127.0.0.1:4222"
REDIS_URL = "redis://127.0.0.1:6379/0"
ACTIVEMQ_URL = "stomp://127.0.0.1:61613"
DIED_HEADER = "bench-died-ns"
DISCOVERY_SECONDS = 60


def died_ns(message_id: str, header: str | None) -> int:
    """The moment a letter died (ns since the epoch), from its header or its message id."""
    return int(header) if header else int(message_id.rsplit("-", 1)[1])


class Site:
    """The kept places of one broker: ``places`` (DeadPlace rows, in the order ``kill`` takes
    their index), ``kill(index, serial)`` makes one letter die into a place now. Every site is
    given the run's RabbitMQ helper; only the RabbitMQ site uses it (its queues go with the
    helper's clean-up)."""

    kind = ""

    def __init__(self, prefix: str, count: int, rabbit: bench.Rabbit) -> None:
        self.prefix = f"{prefix}.{self.kind}"
        self.count = count
        self.places: list = []
        self.sent = 0

    def kill(self, index: int, serial: int) -> None:
        raise NotImplementedError

    def cleanup(self) -> None:
        raise NotImplementedError

    def _discover(self, broker, wanted: list[tuple[str, str]]) -> list:
        """The places named ``wanted`` ((scope, name) pairs), through the console's discovery,
        tried again for a while (RabbitMQ's management API lists a new queue late)."""
        from console.services.brokers import do_discover

        deadline = time.monotonic() + DISCOVERY_SECONDS
        while True:
            found = {(place.scope, place.name): place for place in do_discover(broker, actor=bench.REQUESTER)}
            missing = [key for key in wanted if key not in found]
            if not missing:
                return [found[key] for key in wanted]
            if time.monotonic() > deadline:
                raise SystemExit(f"discovery on {broker.name} did not find {len(missing)} of {len(wanted)} "
                                 f"places, e.g. {missing[0]}")
            time.sleep(1)

    def _add_broker(self, **fields):
        from console.services.brokers import do_add_broker

        return do_add_broker(actor=bench.REQUESTER, name=self.prefix.replace(".", "-"), kind=self.kind, **fields)


class RabbitSite(Site):
    kind = "rabbitmq"

    def __init__(self, prefix: str, count: int, rabbit: bench.Rabbit) -> None:
        super().__init__(prefix, count, rabbit)
        self.rabbit = rabbit
        self.origins = [f"{self.prefix}.p{n:04d}.orders" for n in range(count)]
        self.dlqs = [f"{origin}.dlq" for origin in self.origins]
        self.channel = None

    def make(self) -> None:
        async def declare():
            channel = await self.rabbit.connection.channel()
            for origin, dlq in zip(self.origins, self.dlqs, strict=True):
                await channel.declare_queue(dlq, durable=True)
                self.rabbit.declared.append(dlq)
                await channel.declare_queue(origin, durable=True, arguments={
                    "x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq, "x-message-ttl": 0})
                self.rabbit.declared.append(origin)
            await channel.close()
            self.channel = await self.rabbit.connection.channel(publisher_confirms=True)

        self.rabbit.run(declare())
        broker = self._add_broker(url=bench.AMQP_URL, management_url=bench.MANAGEMENT_URL)
        self.places = self._discover(broker, [(self.rabbit.vhost, dlq) for dlq in self.dlqs])  # scope: the vhost

    def kill(self, index: int, serial: int) -> None:
        import aio_pika

        message = aio_pika.Message(bench.body_of(serial), delivery_mode=aio_pika.DeliveryMode.PERSISTENT,
                                   message_id=f"{self.prefix}-{serial}-{time.time_ns()}")
        self.rabbit.run(self.channel.default_exchange.publish(message, routing_key=self.origins[index]))
        self.sent += 1

    def cleanup(self) -> None:
        """The queues go with the Rabbit helper's own clean-up (``declared``)."""
        if self.channel is not None:
            self.rabbit.run(self.channel.close())


class NatsSite(Site):
    kind = "nats"
    MAX_DELIVER = 3

    def __init__(self, prefix: str, count: int, rabbit: bench.Rabbit) -> None:
        super().__init__(prefix, count, rabbit)
        from console.brokers.asyncloop import LoopThread

        suffix = prefix.rsplit(".", 1)[-1]
        self.stream = f"BENCH_KEEPER_{suffix}"
        self.subject = f"bench.keeper.{suffix}"
        self.consumers = [f"worker_{n:04d}" for n in range(count)]
        self.subscriptions: list = []
        self.loop = LoopThread("bench-nats")
        self.client = None
        self.term_gaps: list[float] = []

    def run(self, action: Callable, timeout: float = 120):
        async def with_js():
            return await action(self.client.jetstream())

        return self.loop.run(with_js(), timeout)

    def make(self) -> None:
        from nats.js.api import AckPolicy, ConsumerConfig, StreamConfig

        from console.brokers.base import BrokerConfig
        from console.brokers.nats.connection import connect

        self.client = self.loop.run(connect(BrokerConfig(kind="nats", url=NATS_URL)), 10)

        async def make(js) -> list:
            await js.add_stream(StreamConfig(name=self.stream, subjects=[f"{self.subject}.>"]))
            for n, name in enumerate(self.consumers):
                await js.add_consumer(self.stream, ConsumerConfig(
                    durable_name=name, filter_subject=f"{self.subject}.p{n}", max_deliver=self.MAX_DELIVER,
                    ack_wait=30.0, ack_policy=AckPolicy.EXPLICIT))
            return [await js.pull_subscribe_bind(name, self.stream) for name in self.consumers]

        self.subscriptions = self.run(make)
        broker = self._add_broker(url=NATS_URL)
        broker.adapter().check()  # the advisory stream exists before the first death
        self.places = self._discover(broker, [(self.stream, name) for name in self.consumers])

    def kill(self, index: int, serial: int) -> None:
        async def die(js) -> None:
            died = time.time_ns()
            await js.publish(f"{self.subject}.p{index}", bench.body_of(serial), headers={DIED_HEADER: str(died)})
            (message,) = await self.subscriptions[index].fetch(1, timeout=10)
            await message.term()
            self.term_gaps.append((time.time_ns() - died) / 1e9)

        self.run(die, 30)
        self.sent += 1

    def cleanup(self) -> None:
        """The stream (with its consumers), and the console's trackers and advisories of it."""
        from nats.js.errors import NotFoundError

        from console.brokers.nats import advisories

        if self.client is None:
            return

        async def remove(js) -> None:
            for subscription in self.subscriptions:
                await subscription.unsubscribe()
            try:
                await js.delete_stream(self.stream)
            except NotFoundError:
                pass
            for consumer in self.consumers:
                for kind in advisories.REASONS:
                    try:
                        await js.delete_consumer(advisories.STREAM,
                                                 advisories.tracker_name(self.stream, consumer, kind))
                    except NotFoundError:
                        pass
            for kind in advisories.REASONS:
                await js.purge_stream(advisories.STREAM, subject=advisories.place_filter(self.stream, "*", kind))

        try:
            self.run(remove, 300)
        except Exception as exc:  # noqa: BLE001 - clean-up is best effort; say what was left
            print(f"could not clean up the NATS stream {self.stream}: {exc!r}")
        self.loop.stop(self.client.close())


class RedisSite(Site):
    kind = "redis"

    def __init__(self, prefix: str, count: int, rabbit: bench.Rabbit) -> None:
        super().__init__(prefix, count, rabbit)
        import redis

        self.client = redis.Redis.from_url(REDIS_URL)
        base = self.prefix.replace(".", ":")
        self.streams = [f"{base}:p{n:04d}:dlq" for n in range(count)]
        self.origins = [f"{base}:p{n:04d}" for n in range(count)]

    def make(self) -> None:
        pipe = self.client.pipeline(transaction=False)
        for stream in self.streams:
            pipe.xadd(stream, {"made": "1"})
        ids = pipe.execute()
        for stream, entry in zip(self.streams, ids, strict=True):
            pipe.xdel(stream, entry)
        pipe.execute()
        broker = self._add_broker(url=REDIS_URL)
        self.places = self._discover(broker, [("", stream) for stream in self.streams])

    def kill(self, index: int, serial: int) -> None:
        self.client.xadd(self.streams[index], {
            "body": bench.body_of(serial), "orig_stream": self.origins[index], "orig_id": f"{serial + 1}-0",
            "group": "workers", "deliveries": "4", "error": "benchmark: poison entry",
            DIED_HEADER: str(time.time_ns())})
        self.sent += 1

    def cleanup(self) -> None:
        for start in range(0, len(self.streams), 500):
            self.client.delete(*self.streams[start:start + 500])
        self.client.close()


class ActiveMQSite(Site):
    kind = "activemq"

    def __init__(self, prefix: str, count: int, rabbit: bench.Rabbit) -> None:
        super().__init__(prefix, count, rabbit)
        from console.brokers.activemq.connection import StompLink
        from console.brokers.base import BrokerConfig

        self.link = StompLink(BrokerConfig(kind="activemq", url=ACTIVEMQ_URL))
        self.dlqs = [f"ActiveMQ.DLQ.Queue.{self.prefix}.p{n:04d}" for n in range(count)]

    def make(self) -> None:
        broker = self._add_broker(url=ACTIVEMQ_URL, options={"dead_places": self.dlqs})
        self.places = self._discover(broker, [("", dlq) for dlq in self.dlqs])

    def kill(self, index: int, serial: int) -> None:
        headers = {"destination": f"/queue/{self.dlqs[index]}", "persistent": "true",
                   DIED_HEADER: str(time.time_ns())}
        self.link.confirmed("SEND", headers, "a death", bench.body_of(serial))
        self.sent += 1

    def cleanup(self) -> None:
        """Drains what the keeper left (nothing, when the run ended well); the queues stay."""
        for dlq in self.dlqs:
            sub = self.link.subscribe(f"/queue/{dlq}", {"ack": "auto"})
            while self.link.next_message(sub, 0.05) is not None:
                pass
            self.link.unsubscribe(sub)
        self.link.close()


SITES: dict[str, type[Site]] = {site.kind: site for site in (RabbitSite, NatsSite, RedisSite, ActiveMQSite)}


def make_sites(prefix: str, counts: dict[str, int], rabbit: bench.Rabbit, sites: list[Site]) -> None:
    """A site per broker with places wanted, each made and discovered (its time printed); each
    goes into ``sites`` before it is made, so a failed set-up is cleaned up all the same."""
    for kind, count in counts.items():
        if not count:
            continue
        site = SITES[kind](prefix, count, rabbit)
        sites.append(site)
        started = time.perf_counter()
        site.make()
        print(f"  {count:,} places on {kind} made and discovered in {time.perf_counter() - started:.1f} s",
              flush=True)


def cleanup(sites: list[Site]) -> None:
    for site in sites:
        try:
            site.cleanup()
        except Exception as exc:  # noqa: BLE001 - the other sites are still cleaned up
            print(f"could not clean up the {site.kind} places: {exc!r}")

