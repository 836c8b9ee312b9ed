"""Capturing again, or after a capture that died between commit and ack, stores no letter twice."""

from __future__ import annotations

import pytest

from console.models import DeadLetter
from console.services.custody import store_captured
from tests.redis_streams.flow import capture, discovered

pytestmark = [pytest.mark.redis, pytest.mark.django_db]


def test_a_second_capture_finds_nothing_new(redis_client, poisoned, redis_broker, operator):
    for i in range(3):
        redis_client.xadd(poisoned.stream, {"body": f"m{i}"})
    poisoned.fail(times=4)
    place = discovered(redis_broker, operator, poisoned.group, scope=poisoned.stream)
    assert capture(place, operator).done == 3
    assert capture(place, operator).done == 0
    assert DeadLetter.objects.count() == 3


def test_entries_committed_but_never_acked_are_matched_not_stored_again(
    redis_client, poisoned, redis_broker, operator, settings
):
    settings.DLO_BATCH_SIZE = 2
    for i in range(3):
        redis_client.xadd(poisoned.stream, {"body": f"m{i}"})
    poisoned.fail(times=4)
    place = discovered(redis_broker, operator, poisoned.group, scope=poisoned.stream)
    with redis_broker.adapter() as adapter:
        session = adapter.open_capture(place.ref, prefetch=2)
        store_captured(place, session.next_batch(2, 0), job=None, actor="crashed-worker")
        session.close()
    assert len(poisoned.deliveries()) == 3  # nothing was acked

    job = capture(place, operator)
    assert (job.status, job.done) == ("succeeded", 3)
    assert sorted(bytes(b) for b in DeadLetter.objects.values_list("body", flat=True)) == [b"m0", b"m1", b"m2"]
    assert not DeadLetter.objects.filter(pending_ack__isnull=False).exists()
    assert poisoned.deliveries() == {}


def test_entries_under_the_threshold_stay_with_their_group(redis_client, poisoned, redis_broker, operator):
    redis_client.xadd(poisoned.stream, {"body": "still retrying"})
    poisoned.fail(times=3)  # delivered 3 times: not over the threshold of 3
    place = discovered(redis_broker, operator, poisoned.group, scope=poisoned.stream)
    assert place.depth == 0
    assert capture(place, operator).done == 0
    assert list(poisoned.deliveries().values()) == [3]
    # The console's claim consumer leaves no trace in the group.
    assert [c["name"] for c in redis_client.xinfo_consumers(poisoned.stream, poisoned.group)] == [b"worker-1"]


def test_entries_the_console_claimed_before_a_crash_are_taken_back_without_waiting(
    redis_client, poisoned, operator
):
    """The console claimed entries, committed copies and died: those entries are no longer
    idle, yet the next capture takes them at once and matches them to their copies."""
    from console.services.brokers import do_add_broker
    from tests.redis_streams.conftest import REDIS_URL

    broker = do_add_broker(actor=operator, name="redis-patient", kind="redis", url=REDIS_URL,
                           options={"threshold": 3, "min_idle_ms": 60_000})
    ids = [redis_client.xadd(poisoned.stream, {"body": f"m{i}"}) for i in range(2)]
    poisoned.fail(times=4)
    # The worker gave up on them two minutes ago (IDLE sets the idle time; JUSTID keeps the count).
    redis_client.xclaim(poisoned.stream, poisoned.group, "worker-1", 0, ids, idle=120_000, justid=True)
    place = discovered(broker, operator, poisoned.group, scope=poisoned.stream)
    assert place.depth == 2
    with broker.adapter() as adapter:
        session = adapter.open_capture(place.ref, prefetch=10)
        store_captured(place, session.next_batch(10, 0), job=None, actor="crashed-worker")
    assert {row["consumer"] for row in redis_client.xpending_range(poisoned.stream, poisoned.group, "-", "+", 10)} == {
        b"dlo-console"}

    job = capture(place, operator)
    assert (job.status, job.done) == ("succeeded", 2)
    assert DeadLetter.objects.count() == 2
    assert poisoned.deliveries() == {}
