"""The kept-place crash scenario (tests.keeper_crash) on NATS JetStream with 200 kept durable
consumers: ten SIGKILLs of the keeper and a restart of the server, and every message whose
deliveries ran out is kept once.

The places are 200 pull consumers on one stream, each filtered to a subject of its own; a
worker decides every message it gets can never succeed (AckTerm), and the server publishes a
MSG_TERMINATED advisory into the console's advisory stream.

Two things nats-server 2.9.10 does across its restart, both seen here first: it put the
console's trackers' delivery pointers back and handed out advisories acknowledged long before,
as first deliveries (1,200 letters stored twice, before captured advisories were deleted from
the advisory stream); and it dropped pull requests without the 408 that ends them (the keeper
waited on 156 requests the server no longer held, before the reader counted them lapsed). And
one the server does at any time: the worker's AckTerm landing after its ack wait ran out, then
the AckTerm of the redelivery, announce one message twice (200 letters stored twice, before a
NATS death was kept as named once: tests/nats/test_a_death_told_twice_is_one_letter.py).

The server is a nats-server of the test's own (tests.nats.conftest.PrivateServer, its store
under tmp, kept across the restart)."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Sequence

import pytest
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, StreamConfig

from console.brokers.nats import advisories
from console.models import Broker, DeadPlace
from console.services.brokers import do_add_broker, do_discover
from tests.keeper_crash import body_of, place_of, survives_kills_and_a_restart
from tests.nats.conftest import Nats, keep_record, recorded

pytestmark = [pytest.mark.keeper, pytest.mark.slow, pytest.mark.nats, pytest.mark.django_db(transaction=True)]

PLACES = 200
#: Messages that die into each consumer before each kill: 400 a round, 4,000 in all.
PER_PLACE = 2
MAX_DELIVER = 2
DYING_SECONDS = 60


class NatsSite:
    can_restart = True

    def __init__(self, server) -> None:
        self.server = server
        self.tool = Nats(server.url)
        suffix = uuid.uuid4().hex[:8]
        self.stream = f"KEPT_{suffix}"
        self.prefix = f"kept.{suffix}"
        self.consumers: list[str] = []
        self.subscriptions: list = []
        self.broker: Broker | None = None
        self.died = 0

    def make_places(self, count: int) -> list[DeadPlace]:
        self.broker = broker = do_add_broker(actor="tests", name="nats-private", kind="nats", url=self.server.url,
                                             options={"advisory_ack_wait": 1})
        broker.adapter().check()  # makes the advisory stream before the first death
        self.tool(keep_record)
        self.consumers = [f"worker_{n:04d}" for n in range(count)]

        async def make(js: JetStreamContext) -> None:
            await js.add_stream(StreamConfig(name=self.stream, subjects=[f"{self.prefix}.>"]))
            for n, name in enumerate(self.consumers):
                await js.add_consumer(self.stream, ConsumerConfig(
                    durable_name=name, filter_subject=f"{self.prefix}.p{n}", max_deliver=MAX_DELIVER,
                    ack_wait=1.0, ack_policy=AckPolicy.EXPLICIT))

        self.tool(make, timeout=120)
        self.subscribe()
        found = {(place.scope, place.name): place for place in do_discover(broker, actor="tests")}
        return [found[(self.stream, name)] for name in self.consumers]

    def subscribe(self) -> None:
        """The failing worker's pull subscriptions, one per consumer."""
        async def bind(js: JetStreamContext) -> list:
            return [await js.pull_subscribe_bind(name, self.stream) for name in self.consumers]

        self.subscriptions = self.tool(bind, timeout=120)

    def let_die(self, first: int, count: int) -> None:
        """Publish, then terminate every delivery on every consumer, until the server has
        published an advisory for each (counted in the advisory stream)."""
        async def publish(js: JetStreamContext) -> None:
            for start in range(first, first + count, 200):
                await asyncio.gather(*(js.publish(f"{self.prefix}.p{place_of(n, len(self.consumers))}", body_of(n))
                                       for n in range(start, min(start + 200, first + count))))

        async def fail(subscription) -> None:
            try:
                for message in await subscription.fetch(100, timeout=0.2):
                    await message.term()
            except TimeoutError:
                pass

        self.tool(publish, timeout=120)
        self.died += count
        deadline = time.monotonic() + DYING_SECONDS
        while self.advisories() < self.died:
            assert time.monotonic() < deadline, f"the server gave up on {self.advisories()} of {self.died}"
            self.tool(lambda js: asyncio.gather(*(fail(s) for s in self.subscriptions)), timeout=120)

    def advisories(self) -> int:
        return self.tool(lambda js: recorded(js, f"{advisories.PREFIX}.*.{self.stream}.*"))

    def restart_broker(self) -> None:
        self.server.stop()
        self.server.start()
        # The worker's connection went with the server: a new one, as a restarted worker makes.
        self.tool.close()
        self.tool = Nats(self.server.url)
        self.subscribe()

    def depths(self, places: Sequence[DeadPlace]) -> int:
        """What the console shows as each place's depth: advisories not yet taken."""
        assert self.broker is not None
        with self.broker.adapter() as adapter:
            return sum(depth or 0 for depth in adapter.depths([place.ref for place in places]).values())

    def after_kill(self) -> None:
        """Nothing to wait for: what a killed reader held comes back after the trackers' ack wait."""

    def close(self) -> None:
        self.tool.close()


def test_every_message_of_two_hundred_consumers_is_kept_once_through_kills_and_a_server_restart(
        private_server, keeper, operator):
    site = NatsSite(private_server)
    try:
        survives_kills_and_a_restart(site, keeper, operator, places=PLACES, per_place=PER_PLACE)
    finally:
        site.close()
