"""The keeper's ActiveMQ reader on the real broker: a hundred dead places followed over one
STOMP connection, each letter handed over once with its own place, no place starved by a
deep one, and whatever is not acknowledged handed back, flagged redelivered, when a place is
let go or the reader closes."""

from __future__ import annotations

import time
from collections import Counter

import pytest

from console.brokers.activemq.adapter import ActiveMQAdapter
from console.brokers.activemq.connection import server_address
from console.brokers.activemq.multiplex import MultiLink
from console.brokers.activemq.reader import ActiveMQReader
from console.brokers.base import BrokerConfig, PlaceReader, PlaceRef, Received
from tests.activemq.conftest import ACTIVEMQ_URL
from tests.sockets import connections_to

pytestmark = pytest.mark.activemq

PER_PLACE = 10


@pytest.fixture
def adapter():
    adapter = ActiveMQAdapter(BrokerConfig(kind="activemq", url=ACTIVEMQ_URL))
    yield adapter
    adapter.close()


@pytest.fixture
def readers(adapter):
    """Opens readers for the test and closes them all afterwards: the keeper's (which flags every
    letter redelivered, as ActiveMQ's own flag does not survive a broker restart), or with
    ``broker_flag`` one that shows ActiveMQ's own ``redelivered`` flag."""
    opened: list[PlaceReader] = []

    def open_(*, broker_flag: bool = False) -> PlaceReader:
        if broker_flag:
            opened.append(ActiveMQReader(adapter, MultiLink(adapter.config), adapter.options, per_place=PER_PLACE,
                                         assume_redelivered=False))
        else:
            opened.append(adapter.open_reader(per_place=PER_PLACE))
        return opened[-1]

    yield open_
    for reader in opened:
        reader.close()


def stomp_connections() -> int:
    """This process's established connections to the test broker."""
    return connections_to(server_address(ACTIVEMQ_URL)[1])


def take_until(reader: PlaceReader, count: int, *, ack: bool = True, seconds: float = 20.0,
               ) -> list[tuple[PlaceRef, Received]]:
    """What the reader hands over until ``count`` letters came (or ``seconds`` passed), each take
    acknowledged when ``ack``, as the keeper does after committing it."""
    got: list[tuple[PlaceRef, Received]] = []
    deadline = time.monotonic() + seconds
    while len(got) < count and time.monotonic() < deadline:
        for place, messages in reader.take(100, wait_seconds=1.0).items():
            assert len(messages) <= PER_PLACE
            got.extend((place, message) for message in messages)
            if ack:
                reader.ack(place, messages)
    return got


def test_a_hundred_places_over_one_connection_each_letter_once_with_its_place(amq, names, nacked, readers):
    queue, dead = nacked([b"died of a nack"])
    places = [PlaceRef(dead)] + [PlaceRef(f"DLQ.indiv.many{i}.{names.suffix}") for i in range(99)]
    sent = {places[3].name: [b"three-a", b"three-b"], places[40].name: [b"forty"],
            places[98].name: [b"last-a", b"last-b", b"last-c"]}
    for name, bodies in sent.items():
        names.made.append(name)
        for body in bodies:
            amq.send(name, body)

    before = stomp_connections()
    reader = readers()
    assert reader.follow(places) == {}
    assert stomp_connections() == before + 1

    got = take_until(reader, 7)
    assert Counter((place.name, message.body) for place, message in got) == Counter(
        [(dead, b"died of a nack")] + [(name, body) for name, bodies in sent.items() for body in bodies])
    assert all(message.redelivered for _place, message in got)  # the keeper's reader: a possible copy, always
    [nacked_letter] = [message for place, message in got if place.name == dead]
    assert (nacked_letter.envelope.origin_queue, nacked_letter.envelope.reason) == (queue, "poison_ack")
    assert reader.take(100, wait_seconds=1.5) == {}  # acknowledged: nothing comes again
    for name in [dead, *sent]:
        assert amq.mine(name) == []


def test_a_place_with_a_thousand_waiting_does_not_starve_the_others(amq, names, readers):
    deep = names("DLQ.deep")
    shallow = [names(f"DLQ.shallow{i}") for i in range(5)]
    for n in range(1000):
        amq.send(deep, b"deep %d" % n)
    for name in shallow:
        amq.send(name, b"shallow")

    reader = readers()
    reader.follow([PlaceRef(name) for name in [deep, *shallow]])
    from_deep = takes = 0
    waiting = set(shallow)
    while waiting and takes < 50:
        taken = reader.take(100, wait_seconds=2.0)
        takes += 1
        for place, messages in taken.items():
            assert len(messages) <= PER_PLACE
            if place.name == deep:
                from_deep += len(messages)
            else:
                waiting.discard(place.name)
            reader.ack(place, messages)
    assert waiting == set()
    assert from_deep <= PER_PLACE * takes
    assert from_deep < 100  # the shallow places came while the deep one still held 900 and more


def test_letting_go_of_a_place_or_closing_hands_its_letters_back_redelivered(amq, names, readers):
    first, second = names("DLQ.handback.a"), names("DLQ.handback.b")
    amq.send(first, b"let go")
    amq.send(second, b"closed")

    reader = readers(broker_flag=True)
    reader.follow([PlaceRef(first), PlaceRef(second)])
    held = {place.name: message for place, message in take_until(reader, 2, ack=False)}
    assert set(held) == {first, second}
    assert not any(message.redelivered for message in held.values())

    reader.follow([PlaceRef(second)])  # let go of the first, its letter unacknowledged
    other = readers(broker_flag=True)
    other.follow([PlaceRef(first)])
    [(place, again)] = take_until(other, 1)
    assert (place.name, again.body, again.message_id, again.redelivered) == (
        first, b"let go", held[first].message_id, True)

    reader.close()
    other.follow([PlaceRef(first), PlaceRef(second)])
    [(place, again)] = take_until(other, 1)
    assert (place.name, again.body, again.message_id, again.redelivered) == (
        second, b"closed", held[second].message_id, True)
    assert amq.mine(first) == [] and amq.mine(second) == []


def test_settled_only_once_nothing_waits_and_nobody_holds_a_letter(amq, names, readers):
    place = names("DLQ.settled")
    amq.send(place, b"held by another consumer")
    sub = amq.link.subscribe(f"/queue/{place}", {"ack": "client-individual"})
    elsewhere = amq.link.next_message(sub, 10)
    assert elsewhere is not None

    reader = readers()
    reader.follow([PlaceRef(place)])
    assert reader.settled(PlaceRef(place)) is False  # another consumer holds it unacknowledged
    amq.link.confirmed("ACK", {"id": elsewhere.headers["ack"]}, "an ACK")
    amq.link.unsubscribe(sub)
    assert reader.settled(PlaceRef(place)) is True

    amq.send(place, b"waiting")
    assert reader.settled(PlaceRef(place)) is False
    [(_place, message)] = take_until(reader, 1, ack=False)
    assert reader.settled(PlaceRef(place)) is False  # taken, not yet acknowledged
    reader.ack(PlaceRef(place), [message])
    assert reader.settled(PlaceRef(place)) is True
    assert amq.mine(place) == []
