"""A consumer group whose worker keeps failing: its pending entries delivered more than the
threshold are found, captured with their envelope, and replayed to their stream, where the
group's consumer reads each one exactly once."""

from __future__ import annotations

import pytest

from console.models import AuditEvent, DeadLetter
from tests.redis_streams.flow import capture, discovered, replay

pytestmark = [pytest.mark.redis, pytest.mark.django_db]


def test_poison_entries_are_discovered_captured_and_replayed_once(redis_client, poisoned, redis_broker, operator):
    ids = [redis_client.xadd(poisoned.stream, {"body": f'{{"order": {i}}}', "sku": f"A-{i}"}) for i in range(3)]
    healthy = redis_client.xadd(poisoned.stream, {"body": "fine"})
    poisoned.fail(times=4)  # delivered 4 times: over the threshold of 3
    redis_client.xack(poisoned.stream, poisoned.group, healthy)  # this one got through after all

    place = discovered(redis_broker, operator, poisoned.group, scope=poisoned.stream)
    assert (place.kind, place.depth, place.origins) == ("pending", 3, [poisoned.stream])

    job = capture(place, operator)
    assert (job.status, job.done) == ("succeeded", 3)
    letters = list(DeadLetter.objects.order_by("id"))
    assert [bytes(letter.body) for letter in letters] == [f'{{"order": {i}}}'.encode() for i in range(3)]
    first = letters[0]
    assert first.message_id == f"{poisoned.stream}:{ids[0].decode()}"
    assert (first.origin_queue, first.origin_address, first.reason, first.death_count) == (
        poisoned.stream, poisoned.stream, "max_deliver", 4)
    assert first.envelope_details["group"] == poisoned.group
    assert first.headers == {"sku": "A-0"}
    # Captured entries have left the group's pending list; the stream itself still has them.
    assert poisoned.deliveries() == {}
    assert redis_client.xlen(poisoned.stream) == 4
    # The console's claiming consumer does not linger in the group.
    assert [c["name"] for c in redis_client.xinfo_consumers(poisoned.stream, poisoned.group)] == [b"worker-1"]

    job = replay(operator, [letter.id for letter in letters])
    assert (job.status, job.done, job.failed) == ("succeeded", 3, 0)
    delivered = poisoned.read_new()
    assert [fields[b"body"] for _, fields in delivered] == [f'{{"order": {i}}}'.encode() for i in range(3)]
    assert [fields[b"x-dlo-replay-id"].decode() for _, fields in delivered] == [
        letter.replay_id for letter in DeadLetter.objects.order_by("id")]
    assert [list(fields) for _, fields in delivered] == [[b"body", b"sku", b"x-dlo-replay-id"]] * 3
    assert poisoned.read_new() == []  # exactly once
    assert set(DeadLetter.objects.values_list("state", flat=True)) == {"replayed"}
    assert AuditEvent.objects.filter(action="replay", outcome="confirmed").exists()


def test_a_replay_acks_the_original_entry_when_the_capture_never_did(redis_client, poisoned, redis_broker, operator):
    """A capture that committed its copies and died before XACK: the replay acks the original
    in the same script that adds the copy, so the worker cannot retry it as well."""
    from console.services.custody import store_captured

    entry = redis_client.xadd(poisoned.stream, {"body": "crash"})
    poisoned.fail(times=4)
    place = discovered(redis_broker, operator, poisoned.group, scope=poisoned.stream)
    with redis_broker.adapter() as adapter:
        session = adapter.open_capture(place.ref, prefetch=10)
        store_captured(place, session.next_batch(10, 0), job=None, actor="crashed-worker")
        session.close()
    assert list(poisoned.deliveries()) == [entry]  # still pending: never acked

    letter = DeadLetter.objects.get()
    assert replay(operator, [letter.id]).done == 1
    assert poisoned.deliveries() == {}
    (copy,) = poisoned.read_new()
    assert copy[1][b"body"] == b"crash"


def test_a_replayed_entry_that_fails_again_comes_back_linked_to_its_letter(redis_client, poisoned, redis_broker,
                                                                           operator):
    from console.models import Job

    redis_client.xadd(poisoned.stream, {"body": "still broken"})
    poisoned.fail(times=4)
    place = discovered(redis_broker, operator, poisoned.group, scope=poisoned.stream)
    capture(place, operator)
    first = DeadLetter.objects.get()
    job = replay(operator, [first.id])
    poisoned.fail(times=4)  # the worker fails the replayed copy too

    assert capture(place, operator).done == 1
    returned = DeadLetter.objects.exclude(pk=first.pk).get()
    assert returned.parent_id == first.id
    assert Job.objects.get(pk=job.pk).returned == 1
