"""The keeper's RabbitMQ reader on the real broker: two hundred dead places followed over one
connection and a handful of channels, each letter handed over once with its own place, no
place starved by a deep one, and whatever is not acknowledged handed back, flagged
redelivered, when a place is let go or the reader closes; a queue deleted while followed
leaves the others readable."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

import aio_pika
import pytest

from console.brokers.base import BrokerError, PlaceReader, PlaceRef, Received
from console.brokers.rabbitmq.adapter import RabbitMQAdapter
from tests.rabbitmq.conftest import rabbit_config
from tests.rabbitmq.kit import RabbitKit

pytestmark = pytest.mark.rabbitmq

PER_PLACE = 10


@pytest.fixture
def adapter():
    with RabbitMQAdapter(rabbit_config()) as rabbit:
        yield rabbit


@pytest.fixture
def reader(adapter):
    with adapter.open_reader(per_place=PER_PLACE) as opened:
        yield opened


class DeadPlaces:
    """Dead-letter queues fed the way a real one is: messages published to a fanout exchange
    reach one work queue, its consumer rejects them, and RabbitMQ dead-letters each to a
    direct exchange under the routing key it was published with, the name of its DLQ."""

    def __init__(self, kit: RabbitKit, count: int) -> None:
        self.kit = kit
        self.entry, self.dead, self.work = kit.name("entry"), kit.name("dead"), kit.name("work")
        self.names = [kit.name(f"place{n:03d}") + ".dlq" for n in range(count)]
        kit.run(self._declare(), timeout=120)
        kit.queues += [self.work, *self.names]
        kit.exchanges += [self.entry, self.dead]

    async def _declare(self) -> None:
        connection: Any = self.kit.connection  # the kit's, connected
        async with connection.channel() as channel:
            entry = await channel.declare_exchange(self.entry, aio_pika.ExchangeType.FANOUT)
            dead = await channel.declare_exchange(self.dead, aio_pika.ExchangeType.DIRECT)
            work = await channel.declare_queue(self.work, arguments={"x-dead-letter-exchange": self.dead})
            await work.bind(entry)
            for name in self.names:
                await (await channel.declare_queue(name)).bind(dead, name)

    @property
    def refs(self) -> list[PlaceRef]:
        return [PlaceRef(name) for name in self.names]

    def kill(self, letters: dict[str, int], *, followed: bool = True) -> None:
        """Dead-letter ``count`` letters into each named place; bodies say ``place/n``. Waits
        until they are there, unless a reader follows the places (it takes them at once)."""
        for name, count in letters.items():
            for n in range(count):
                self.kit.publish(name, f"{name}/{n}".encode(), exchange=self.entry)
        self.kit.reject_all(self.work, sum(letters.values()))
        for name, count in letters.items() if not followed else ():
            self.kit.wait_depth(name, count)


def take_until(reader: PlaceReader, count: int, *, rounds: int = 50) -> dict[PlaceRef, list[Received]]:
    """What the reader hands over until ``count`` messages came (or ``rounds`` takes)."""
    taken: dict[PlaceRef, list[Received]] = {}
    for _ in range(rounds):
        if sum(map(len, taken.values())) >= count:
            break
        for place, messages in reader.take(1000, wait_seconds=2).items():
            taken.setdefault(place, []).extend(messages)
    return taken


def reader_connections(kit: RabbitKit, adapter: RabbitMQAdapter) -> list[dict]:
    rows = kit.http.get("/api/connections", params={"columns": "name,client_properties,channels"}).json()
    name = adapter.connection_name
    return [row for row in rows if (row.get("client_properties") or {}).get("connection_name") == name]


def test_two_hundred_places_over_one_connection_each_letter_once_with_its_place(kit, adapter, reader):
    places = DeadPlaces(kit, 200)
    assert reader.follow(places.refs) == {}
    # The management API counts a connection's channels every few seconds.
    kit.wait_for(lambda: [row.get("channels") for row in reader_connections(kit, adapter)] == [1],
                 "one connection of the reader's, with its one channel of consumers")
    assert all(kit.consumers(name) == 1 for name in places.names[::20])

    dying = {name: 3 for name in places.names[::10]}  # 20 places
    places.kill(dying)
    taken = take_until(reader, 60)

    assert {place.name: len(messages) for place, messages in taken.items()} == dying
    bodies = Counter(message.body.decode() for messages in taken.values() for message in messages)
    assert set(bodies.values()) == {1}  # each once
    for place, messages in taken.items():
        assert all(message.body.decode().startswith(place.name + "/") for message in messages)
        assert all(message.envelope.origin_queue == places.work for message in messages)
    assert reader.take(1000, wait_seconds=0.5) == {}  # nothing twice

    some = next(iter(taken))
    assert not reader.settled(some)  # taken, not acknowledged
    reader.ack_all(taken)  # the twenty places' acks in one call
    assert all(kit.depth(name) == 0 for name in dying)
    assert reader.settled(some)
    assert [row.get("channels") for row in reader_connections(kit, adapter)] == [1]
    reader.close()  # what was not acknowledged would go back to its queue now
    time.sleep(1)
    assert all(kit.depth(name) == 0 for name in dying)


def test_a_deep_place_does_not_starve_the_others(kit, reader):
    places = DeadPlaces(kit, 6)
    deep, *others = places.refs
    kit.publish_many(deep.name, [aio_pika.Message(f"deep/{n}".encode()) for n in range(1000)])
    assert reader.follow(places.refs) == {}
    assert not reader.settled(deep)  # messages wait
    places.kill({place.name: 1 for place in others})

    seen: Counter[str] = Counter()
    for _ in range(50):
        if all(seen[place.name] for place in others):
            break
        taken = reader.take(1000, wait_seconds=2)
        assert len(taken.get(deep, [])) <= PER_PLACE
        for place, messages in taken.items():
            seen[place.name] += len(messages)
            reader.ack(place, messages)

    assert all(seen[place.name] == 1 for place in others)
    assert kit.depth(deep.name) > 0  # the others came while the deep one was still full


def test_letting_go_and_closing_hand_back_what_was_not_acknowledged(kit, adapter):
    places = DeadPlaces(kit, 2)
    kept, dropped = places.refs
    places.kill({kept.name: 5, dropped.name: 5}, followed=False)
    reader = adapter.open_reader(per_place=PER_PLACE)
    try:
        reader.follow([kept, dropped])
        taken = take_until(reader, 10)
        assert {place: len(messages) for place, messages in taken.items()} == {kept: 5, dropped: 5}
        assert kit.depth(dropped.name) == 0

        assert reader.follow([kept]) == {}
        kit.wait_depth(dropped.name, 5)
        assert kit.consumers(dropped.name) == 0
        assert kit.consumers(kept.name) == 1
    finally:
        reader.close()
    kit.wait_depth(kept.name, 5)
    for name in (kept.name, dropped.name):
        back = kit.drain(name)
        assert len(back) == 5 and all(message.redelivered for message in back)


def test_a_queue_deleted_while_followed_leaves_the_others_readable(kit, reader):
    places = DeadPlaces(kit, 3)
    first, deleted, last = places.refs
    missing = PlaceRef(kit.name("never-declared") + ".dlq")
    refused = reader.follow([*places.refs, missing])
    assert list(refused) == [missing] and refused[missing].permanent

    kit.delete_queue(deleted.name)
    kit.queues.remove(deleted.name)
    places.kill({first.name: 1, last.name: 1})
    taken = take_until(reader, 2)
    assert {place: len(messages) for place, messages in taken.items()} == {first: 1, last: 1}
    for place, messages in taken.items():
        reader.ack(place, messages)

    refused = reader.follow(places.refs)  # named again: now reported
    assert list(refused) == [deleted] and refused[deleted].permanent
    places.kill({first.name: 1})
    assert [len(messages) for messages in take_until(reader, 1).values()] == [1]


def test_a_lost_connection_ends_the_take_and_hands_everything_back(kit, adapter, reader):
    places = DeadPlaces(kit, 2)
    places.kill({name: 2 for name in places.names}, followed=False)
    reader.follow(places.refs)
    assert sum(map(len, take_until(reader, 4).values())) == 4

    kit.kill_connection(adapter.connection_name)  # as a broker restart would
    with pytest.raises(BrokerError) as lost:
        for _ in range(10):
            reader.take(1000, wait_seconds=1)
    assert not lost.value.permanent
    for name in places.names:
        kit.wait_depth(name, 2)


def test_a_quorum_place_is_read_beside_classic_ones(kit, reader):
    """Quorum queues refuse a channel-wide prefetch (RabbitMQ closes the connection): the reader
    sets none, so a quorum dead place shares a channel with classic ones."""
    places = DeadPlaces(kit, 2)
    quorum = PlaceRef(kit.queue(kit.name("quorum") + ".dlq", quorum=True))
    for n in range(3):
        kit.publish(quorum.name, f"quorum/{n}".encode())
    assert reader.follow([*places.refs, quorum]) == {}
    places.kill({name: 1 for name in places.names})
    taken = take_until(reader, 5)
    assert {place: len(messages) for place, messages in taken.items()} == {**{p: 1 for p in places.refs}, quorum: 3}
    for place, messages in taken.items():
        reader.ack(place, messages)
    assert kit.depth(quorum.name) == 0 and reader.settled(quorum)
