"""The keeper's NATS reader on the real server: a hundred dead places (durable consumers)
followed over the adapter's one connection, each letter handed over once with its own place,
no place starved by a deep one, an acknowledged letter never handed over again, whatever is not
acknowledged handed back when a place is let go or the reader closes; a
place that does not exist is refused, and a place is settled only once its advisory is
acknowledged.

The hundred places are made as cheaply as the server allows: one stream, a hundred consumers
each filtered to a subject of its own (``dlor.<id>.p<n>``); a worker's AckTerm makes a message
die (a MSG_TERMINATED advisory), a NAK until ``max_deliver`` makes one die the other way."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, StreamConfig
from nats.js.errors import NotFoundError

from console.brokers import BrokerConfig
from console.brokers.base import PlaceReader, PlaceRef, Received
from console.brokers.nats import advisories
from console.brokers.nats.adapter import NatsAdapter
from tests.nats.conftest import NATS_URL, Nats, recorded, waiting

pytestmark = pytest.mark.nats

PLACES = 100
PER_PLACE = 10


class HundredPlaces:
    def __init__(self, nats: Nats, count: int = PLACES) -> None:
        self.nats = nats
        suffix = uuid.uuid4().hex[:8]
        self.stream, self.prefix = f"DLOR_{suffix}", f"dlor.{suffix}"
        self.consumers = [f"worker_{n:03d}" for n in range(count)]

        async def make(js: JetStreamContext) -> None:
            await js.add_stream(StreamConfig(name=self.stream, subjects=[f"{self.prefix}.>"]))
            await asyncio.gather(*(js.add_consumer(self.stream, ConsumerConfig(
                durable_name=name, filter_subject=f"{self.prefix}.p{n}", max_deliver=2, ack_wait=1.0,
                ack_policy=AckPolicy.EXPLICIT)) for n, name in enumerate(self.consumers)))

        nats(make, timeout=120)

    @property
    def refs(self) -> list[PlaceRef]:
        return [PlaceRef(name, self.stream) for name in self.consumers]

    def kill(self, place: int, count: int, *, nak: bool = False) -> None:
        """``count`` messages die in consumer ``place``; bodies say ``p<place>/<n>``. Returns
        once the server has stored their advisories (a message NAKed to its last delivery dies
        only when the worker asks again: the server checks the count as it delivers)."""
        subject = f"{advisories.PREFIX}.*.{self.stream}.{self.consumers[place]}"

        async def die(js: JetStreamContext) -> None:
            wanted = await recorded(js, subject) + count
            await asyncio.gather(*(js.publish(f"{self.prefix}.p{place}", f"p{place}/{n}".encode())
                                   for n in range(count)))
            worker = await js.pull_subscribe_bind(self.consumers[place], self.stream)
            try:
                while await recorded(js, subject) < wanted:
                    try:
                        messages = await worker.fetch(count, timeout=0.5)
                    except TimeoutError:
                        continue
                    for message in messages:
                        await (message.nak() if nak else message.term())
            finally:
                await worker.unsubscribe()

        self.nats(die, timeout=120)

    def cleanup(self) -> None:
        async def remove(js: JetStreamContext) -> None:
            await js.delete_stream(self.stream)
            for name in self.consumers:
                for kind in advisories.REASONS:
                    try:
                        await js.delete_consumer(advisories.STREAM, advisories.tracker_name(self.stream, name, kind))
                    except NotFoundError:
                        pass
            await js.purge_stream(advisories.STREAM, subject=f"{advisories.PREFIX}.*.{self.stream}.*")

        self.nats(remove, timeout=120)


@pytest.fixture
def places(nats_tool):
    started = time.monotonic()
    made = HundredPlaces(nats_tool)
    print(f"\n{PLACES} consumers made in {time.monotonic() - started:.2f} s")
    yield made
    made.cleanup()


@pytest.fixture
def adapter():
    # The trackers' ack wait, 10 s: what a reader lets go comes back once its open requests
    # have expired, half that (console.brokers.nats.reader.expiry), and what these tests hold
    # unacknowledged is held for less than that.
    with NatsAdapter(BrokerConfig(kind="nats", url=NATS_URL, options={"advisory_ack_wait": 10})) as nats:
        yield nats


def take_until(reader: PlaceReader, count: int, *, rounds: int = 20) -> dict[PlaceRef, list[Received]]:
    taken: dict[PlaceRef, list[Received]] = {}
    for _ in range(rounds):
        if sum(map(len, taken.values())) >= count:
            break
        for place, batch in reader.take(max_count=1000, wait_seconds=2).items():
            taken.setdefault(place, []).extend(batch)
    return taken


def bodies(taken: dict[PlaceRef, list[Received]]) -> dict[str, list[bytes]]:
    return {place.name: sorted(received.body for received in batch) for place, batch in taken.items()}


def test_letters_dying_into_a_few_of_a_hundred_places_are_taken_once_with_their_place(places, adapter):
    started = time.monotonic()
    with adapter.open_reader(per_place=PER_PLACE) as reader:
        assert reader.follow(places.refs) == {}
        print(f"followed {PLACES} places in {time.monotonic() - started:.2f} s")
        places.kill(3, 2)
        places.kill(50, 1, nak=True)
        places.kill(97, 2)
        taken = take_until(reader, 5)
        assert bodies(taken) == {"worker_003": [b"p3/0", b"p3/1"], "worker_050": [b"p50/0"],
                                 "worker_097": [b"p97/0", b"p97/1"]}
        letter = taken[PlaceRef("worker_050", places.stream)][0]
        # Flagged redelivered though delivered once: on NATS custody always looks for a copy
        # committed before a crash (capture.received says why).
        assert (letter.envelope.reason, letter.envelope.death_count, letter.redelivered) == ("max_deliver", 2, True)
        for place, batch in taken.items():
            reader.ack(place, batch)
        assert reader.take(max_count=1000, wait_seconds=1) == {}
    with adapter.open_reader(per_place=PER_PLACE) as again:
        assert again.follow(places.refs) == {}
        assert again.take(max_count=1000, wait_seconds=1) == {}


def test_a_place_with_hundreds_dead_does_not_starve_another(places, adapter):
    places.kill(0, 300)
    places.kill(1, 3)
    deep, shallow = places.refs[0], places.refs[1]
    with adapter.open_reader(per_place=PER_PLACE) as reader:
        reader.follow(places.refs)
        taken: dict[PlaceRef, list[Received]] = {}
        for _ in range(5):
            for place, batch in reader.take(max_count=1000, wait_seconds=1).items():
                taken.setdefault(place, []).extend(batch)
        assert sorted(r.body for r in taken[shallow]) == [b"p1/0", b"p1/1", b"p1/2"]
        # Nothing acknowledged yet: the deep place cannot have more than its share out.
        assert 0 < len(taken[deep]) <= PER_PLACE
        reader.ack(deep, taken[deep])
        more = take_until(reader, 1)
        assert 0 < len(more[deep]) <= PER_PLACE
        assert not {r.body for r in more[deep]} & {r.body for r in taken[deep]}


def test_letting_a_place_go_or_closing_hands_its_letters_back(places, adapter):
    first, second = places.refs[10], places.refs[20]
    places.kill(10, 1)
    places.kill(20, 1)
    reader = adapter.open_reader(per_place=PER_PLACE)
    reader.follow(places.refs)
    assert bodies(take_until(reader, 2)) == {first.name: [b"p10/0"], second.name: [b"p20/0"]}
    reader.follow([ref for ref in places.refs if ref != first])
    with adapter.open_reader(per_place=PER_PLACE) as other:
        other.follow([first])
        (letter,) = take_until(other, 1)[first]
        assert letter.body == b"p10/0"
        other.ack(first, [letter])
        reader.close()
        other.follow([first, second])
        (letter,) = take_until(other, 1)[second]
        assert letter.body == b"p20/0"


def test_a_place_that_does_not_exist_is_refused(places, adapter):
    missing_consumer = PlaceRef("nobody", places.stream)
    missing_stream = PlaceRef("worker_000", "NO_SUCH_STREAM_" + uuid.uuid4().hex[:6])
    with adapter.open_reader(per_place=PER_PLACE) as reader:
        refused = reader.follow([*places.refs[:5], missing_consumer, missing_stream])
        assert set(refused) == {missing_consumer, missing_stream}
        assert all(error.permanent for error in refused.values())


def test_a_place_is_settled_only_once_its_letter_is_acknowledged(places, adapter):
    place = places.refs[42]
    with adapter.open_reader(per_place=PER_PLACE) as reader:
        reader.follow(places.refs)
        assert reader.settled(place)
        places.kill(42, 1)
        depths = adapter.depths(places.refs)
        assert depths[place] == 1 and sum(d or 0 for d in depths.values()) == 1
        assert not reader.settled(place)
        (letter,) = take_until(reader, 1)[place]
        assert not reader.settled(place)
        reader.ack(place, [letter])
        assert reader.settled(place)
        assert adapter.depths([place]) == {place: 0}
    # Acknowledged, the advisory left the console's advisory stream; the record still counts it.
    subject = f"{advisories.PREFIX}.*.{places.stream}.{place.name}"
    assert places.nats(lambda js: waiting(js, subject)) == 0 and places.nats(lambda js: recorded(js, subject)) == 1
