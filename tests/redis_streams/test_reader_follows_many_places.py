"""The keeper's Redis reader on the real server: a hundred dead places (consumer groups' pending
entries and dead streams) followed over one connection, each letter handed over once with its
own place, no place starved by a deep one, acknowledged letters gone from their place, letters
not acknowledged still there for the next reader when a place is let go or the reader closes,
a place that is not there reported by follow, and settled only once nothing waits or is held."""

from __future__ import annotations

import time
from collections import Counter
from urllib.parse import urlsplit

import pytest

from console.brokers.base import BrokerConfig, PlaceReader, PlaceRef, Received
from console.brokers.redis.adapter import RedisStreamsAdapter
from tests.redis_streams.conftest import REDIS_URL, TEST_OPTIONS
from tests.redis_streams.consumers import DeadStreamWorker, PoisonedGroup
from tests.sockets import connections_to

pytestmark = pytest.mark.redis

PER_PLACE = 10


@pytest.fixture
def adapter():
    adapter = RedisStreamsAdapter(BrokerConfig(kind="redis", url=REDIS_URL, options=dict(TEST_OPTIONS)))
    yield adapter
    adapter.close()


@pytest.fixture
def readers(adapter):
    """Opens readers for the test and closes them all afterwards."""
    opened: list[PlaceReader] = []

    def open_() -> PlaceReader:
        opened.append(adapter.open_reader(per_place=PER_PLACE))
        return opened[-1]

    yield open_
    for reader in opened:
        reader.close()


def redis_connections() -> int:
    """This process's established connections to the test broker."""
    return connections_to(urlsplit(REDIS_URL).port or 6379)


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


def groups_and_dead_streams(redis_client, names, count: int) -> tuple[list[PoisonedGroup], list[DeadStreamWorker]]:
    groups = [PoisonedGroup(redis_client, names(f"orders{i}"), "billing").create() for i in range(count)]
    workers = [DeadStreamWorker(redis_client, names(f"sent{i}"), "billing").create() for i in range(count)]
    return groups, workers


def group_place(group: PoisonedGroup) -> PlaceRef:
    return PlaceRef(group.group, scope=group.stream)


def stream_place(worker: DeadStreamWorker) -> PlaceRef:
    return PlaceRef(worker.dead_stream)


def test_a_hundred_places_over_one_connection_each_letter_once_with_its_place(redis_client, names, readers):
    groups, workers = groups_and_dead_streams(redis_client, names, 50)
    places = [group_place(g) for g in groups] + [stream_place(w) for w in workers]
    before = redis_connections()
    reader = readers()
    assert reader.follow(places) == {}

    sent: list[tuple[PlaceRef, bytes]] = []
    for i in (3, 17, 49):
        for body in (b"group %d a" % i, b"group %d b" % i):
            redis_client.xadd(groups[i].stream, {"body": body})
            sent.append((group_place(groups[i]), body))
        groups[i].fail(times=4)
    for i in (0, 25):
        redis_client.xadd(workers[i].stream, {"body": b"stream %d" % i})
        workers[i].fail_all()
        sent.append((stream_place(workers[i]), b"stream %d" % i))

    got = take_until(reader, len(sent))
    assert Counter((place, message.body) for place, message in got) == Counter(sent)
    assert reader.take(100, wait_seconds=1.5) == {}  # acknowledged: nothing comes again
    assert redis_connections() == before + 1
    for i in (3, 17, 49):
        assert groups[i].deliveries() == {}
    for i in (0, 25):
        assert redis_client.xlen(workers[i].dead_stream) == 0
    [letter] = [message for place, message in got if place == stream_place(workers[0])]
    assert letter.envelope.origin_queue == workers[0].stream


def test_a_place_with_a_thousand_dead_does_not_starve_the_others(redis_client, names, readers):
    groups, workers = groups_and_dead_streams(redis_client, names, 3)
    deep_group, deep_stream = groups[0], workers[0]
    pipe = redis_client.pipeline(transaction=False)
    for n in range(1000):
        pipe.xadd(deep_group.stream, {"body": b"deep group %d" % n})
        pipe.xadd(deep_stream.dead_stream, {"body": b"deep stream %d" % n})
    pipe.execute()
    deep_group.fail(times=4)
    for group in groups[1:]:
        redis_client.xadd(group.stream, {"body": b"shallow"})
        group.fail(times=4)
    for worker in workers[1:]:
        redis_client.xadd(worker.stream, {"body": b"shallow"})
        worker.fail_all()

    reader = readers()
    deep = {group_place(deep_group), stream_place(deep_stream)}
    reader.follow([group_place(g) for g in groups] + [stream_place(w) for w in workers])
    from_deep = takes = 0
    waiting = {group_place(g) for g in groups[1:]} | {stream_place(w) for w in workers[1:]}
    while waiting and takes < 50:
        taken = reader.take(100, wait_seconds=2.0)
        takes += 1
        for place, messages in taken.items():
            assert len(messages) <= PER_PLACE
            if place in deep:
                from_deep += len(messages)
            else:
                waiting.discard(place)
            reader.ack(place, messages)
    assert waiting == set()
    assert from_deep <= 2 * PER_PLACE * takes
    assert from_deep < 200  # the shallow places came while the deep ones still held 900 and more each


def test_letting_go_of_a_place_or_closing_leaves_its_letters_for_the_next_reader(redis_client, names, readers):
    groups, workers = groups_and_dead_streams(redis_client, names, 2)
    for group in groups:
        redis_client.xadd(group.stream, {"body": b"pending"})
        group.fail(times=4)
    for worker in workers:
        redis_client.xadd(worker.stream, {"body": b"dead"})
        worker.fail_all()
    let_go = [group_place(groups[0]), stream_place(workers[0])]
    closed = [group_place(groups[1]), stream_place(workers[1])]

    reader = readers()
    reader.follow(let_go + closed)
    held = {place: message for place, message in take_until(reader, 4, ack=False)}
    assert set(held) == set(let_go + closed)

    reader.follow(closed)  # let go of the first two, their letters unacknowledged
    other = readers()
    other.follow(let_go)
    again = {place: message for place, message in take_until(other, 2)}
    assert {place: (m.body, m.message_id) for place, m in again.items()} == {
        place: (held[place].body, held[place].message_id) for place in let_go}

    reader.close()
    other.follow(let_go + closed)
    again = {place: message for place, message in take_until(other, 2)}
    assert {place: (m.body, m.message_id) for place, m in again.items()} == {
        place: (held[place].body, held[place].message_id) for place in closed}
    assert [group.deliveries() for group in groups] == [{}, {}]
    assert [redis_client.xlen(worker.dead_stream) for worker in workers] == [0, 0]


def test_a_place_that_is_not_there_is_reported_by_follow(redis_client, names, readers):
    [group], [worker] = groups_and_dead_streams(redis_client, names, 1)
    redis_client.set(names("not-a-stream"), "text")
    missing = [PlaceRef("no-such-group", scope=group.stream), PlaceRef("billing", scope=names("no-stream")),
               PlaceRef(names("no-stream:dlq")), PlaceRef(names("not-a-stream"))]

    reader = readers()
    errors = reader.follow([group_place(group), stream_place(worker), *missing])
    assert set(errors) == set(missing)
    assert all(error.permanent for error in errors.values())

    redis_client.xadd(worker.stream, {"body": b"still read"})
    worker.fail_all()
    [(place, message)] = take_until(reader, 1)
    assert (place, message.body) == (stream_place(worker), b"still read")


def test_settled_only_once_nothing_waits_and_nothing_is_held(redis_client, names, readers):
    [group], [worker] = groups_and_dead_streams(redis_client, names, 1)
    reader = readers()
    places = [group_place(group), stream_place(worker)]
    reader.follow(places)
    assert [reader.settled(place) for place in places] == [True, True]

    redis_client.xadd(group.stream, {"body": b"delivered twice"})
    group.fail(times=2)
    assert reader.settled(group_place(group)) is True  # under the threshold: not a letter yet
    group.fail(times=3)  # two more deliveries: four, over the threshold
    redis_client.xadd(worker.stream, {"body": b"dead"})
    worker.fail_all()
    assert [reader.settled(place) for place in places] == [False, False]

    taken = take_until(reader, 2, ack=False)
    assert [reader.settled(place) for place in places] == [False, False]  # taken, not yet acknowledged
    for place, message in taken:
        reader.ack(place, [message])
    assert [reader.settled(place) for place in places] == [True, True]
