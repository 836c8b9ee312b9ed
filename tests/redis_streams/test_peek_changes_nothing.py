"""Browsing with XPENDING and XRANGE leaves delivery counts, length, order and entries as they were."""

from __future__ import annotations

import pytest

from tests.redis_streams.flow import discovered

pytestmark = [pytest.mark.redis, pytest.mark.django_db]


def _state(client, stream, group):
    return (
        client.xpending_range(stream, group, "-", "+", 1000),
        client.xlen(stream),
        client.xrange(stream),
        [(c["name"], c["pending"]) for c in client.xinfo_consumers(stream, group)],
    )


def test_peeking_pending_letters_changes_nothing(redis_client, poisoned, redis_broker, operator):
    for i in range(4):
        redis_client.xadd(poisoned.stream, {"body": f"m{i}", "n": str(i)})
    poisoned.fail(times=5)
    place = discovered(redis_broker, operator, poisoned.group, scope=poisoned.stream)
    before = _state(redis_client, poisoned.stream, poisoned.group)
    counts = [row["times_delivered"] for row in before[0]]

    with redis_broker.adapter() as adapter:
        for _ in range(3):
            peeked = adapter.peek(place.ref, limit=3)
            assert [m.body for m in peeked] == [b"m0", b"m1", b"m2"]
            assert [m.envelope.death_count for m in peeked] == counts[:3]

    after = _state(redis_client, poisoned.stream, poisoned.group)
    assert [(r["message_id"], r["consumer"], r["times_delivered"]) for r in after[0]] == [
        (r["message_id"], r["consumer"], r["times_delivered"]) for r in before[0]]
    assert after[1:] == before[1:]


def test_peeking_a_dead_stream_changes_nothing(redis_client, dead_stream_worker, redis_broker, operator):
    worker = dead_stream_worker
    for i in range(3):
        redis_client.xadd(worker.stream, {"body": f"m{i}"})
    worker.fail_all()
    place = discovered(redis_broker, operator, worker.dead_stream)
    before = redis_client.xrange(worker.dead_stream)
    with redis_broker.adapter() as adapter:
        assert [m.body for m in adapter.peek(place.ref, limit=10)] == [b"m0", b"m1", b"m2"]
        assert [m.body for m in adapter.peek(place.ref, limit=2)] == [b"m0", b"m1"]
    assert redis_client.xrange(worker.dead_stream) == before
    assert redis_client.xinfo_groups(worker.dead_stream)[0]["pending"] == 0


def test_discovery_and_stats_claim_nothing(redis_client, poisoned, redis_broker, operator):
    for i in range(2):
        redis_client.xadd(poisoned.stream, {"body": f"m{i}"})
    poisoned.fail(times=4)
    before = _state(redis_client, poisoned.stream, poisoned.group)
    place = discovered(redis_broker, operator, poisoned.group, scope=poisoned.stream)
    with redis_broker.adapter() as adapter:
        info = adapter.stats(place.ref)
    assert (info.depth, info.consumers) == (2, 1)
    assert info.oldest_at is not None
    after = _state(redis_client, poisoned.stream, poisoned.group)
    assert [(r["message_id"], r["times_delivered"]) for r in after[0]] == [
        (r["message_id"], r["times_delivered"]) for r in before[0]]
    assert after[3] == before[3]
