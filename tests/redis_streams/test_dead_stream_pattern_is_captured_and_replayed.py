"""The common pattern: a worker XADDs the entries it gives up on to ``<stream>:dlq`` with
``orig_stream``, ``orig_id``, ``group``, ``deliveries`` and ``error``, then XACKs them. The dead
stream is found, captured (entries leave it only once committed) and replayed to the origin."""

from __future__ import annotations

import pytest

from console.models import DeadLetter
from console.services.custody import store_captured
from tests.redis_streams.flow import capture, discovered, replay

pytestmark = [pytest.mark.redis, pytest.mark.django_db]


def test_dead_stream_letters_carry_the_pattern_fields_into_their_envelope(
    redis_client, dead_stream_worker, redis_broker, operator
):
    worker = dead_stream_worker
    redis_client.xadd(worker.stream, {"payload": b'{"sku": "X"}', "tenant": "acme"})
    (orig_id,) = worker.fail_all(error="ValueError: unknown sku 'X'", deliveries=5)

    place = discovered(redis_broker, operator, worker.dead_stream)
    assert (place.kind, place.discovered_by, place.depth, place.origins) == (
        "stream", "convention", 1, [worker.stream])

    assert capture(place, operator).done == 1
    letter = DeadLetter.objects.get()
    assert bytes(letter.body) == b'{"sku": "X"}'
    assert (letter.origin_queue, letter.reason, letter.death_count) == (worker.stream, "max_deliver", 5)
    assert letter.exception_message == "ValueError: unknown sku 'X'"
    assert letter.envelope_details["orig_id"] == orig_id.decode()
    assert letter.envelope_details["group"] == worker.group
    assert letter.headers["tenant"] == "acme" and letter.headers["orig_stream"] == worker.stream
    assert redis_client.xlen(worker.dead_stream) == 0

    assert replay(operator, [letter.id]).done == 1
    (entry,) = redis_client.xrange(worker.stream, "(" + orig_id.decode(), "+")
    # The origin's consumer gets the message as first published, plus the replay id.
    assert entry[1] == {b"payload": b'{"sku": "X"}', b"tenant": b"acme",
                        b"x-dlo-replay-id": DeadLetter.objects.get().replay_id.encode()}
    reply = redis_client.xreadgroup(worker.group, "worker-2", {worker.stream: ">"})
    assert [e[0] for e in reply[0][1]] == [entry[0]]
    assert redis_client.xreadgroup(worker.group, "worker-2", {worker.stream: ">"}) == []


def test_entries_leave_the_dead_stream_only_after_their_copies_are_committed(
    redis_client, dead_stream_worker, redis_broker, operator
):
    worker = dead_stream_worker
    for i in range(3):
        redis_client.xadd(worker.stream, {"body": f"m{i}"})
    worker.fail_all()
    place = discovered(redis_broker, operator, worker.dead_stream)
    with redis_broker.adapter() as adapter:
        session = adapter.open_capture(place.ref, prefetch=10)
        batch = session.next_batch(10, 0)
        assert redis_client.xlen(worker.dead_stream) == 3  # read, not yet taken
        store_captured(place, batch, job=None, actor="tests")
        session.close()  # died before the ack
    assert redis_client.xlen(worker.dead_stream) == 3

    assert capture(place, operator).status == "succeeded"
    assert redis_client.xlen(worker.dead_stream) == 0
    assert sorted(bytes(b) for b in DeadLetter.objects.values_list("body", flat=True)) == [b"m0", b"m1", b"m2"]


def test_a_stream_holding_pattern_entries_is_dead_whatever_its_name(redis_client, names, redis_broker, operator):
    parked = names("parked-orders")
    redis_client.xadd(parked, {"orig_stream": "orders", "orig_id": "1-1", "error": "boom", "body": "x"})
    place = discovered(redis_broker, operator, parked)
    assert (place.kind, place.discovered_by, place.origins, place.depth) == ("stream", "content", ["orders"], 1)
