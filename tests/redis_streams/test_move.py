"""Moving letters to another stream, and what happens when the destination is not there."""

from __future__ import annotations

import pytest

from console.models import AuditEvent, DeadLetter
from tests.redis_streams.flow import capture, discovered, move, replay

pytestmark = [pytest.mark.redis, pytest.mark.django_db]


@pytest.fixture
def held(redis_client, poisoned, redis_broker, operator):
    for i in range(2):
        redis_client.xadd(poisoned.stream, {"body": f"m{i}"})
    poisoned.fail(times=4)
    capture(discovered(redis_broker, operator, poisoned.group, scope=poisoned.stream), operator)
    return list(DeadLetter.objects.order_by("id"))


def test_move_to_another_existing_stream(redis_client, names, held, operator):
    parking = names("parking")
    redis_client.xgroup_create(parking, "auditors", id="$", mkstream=True)
    job = move(operator, [letter.id for letter in held], parking)
    assert (job.status, job.done, job.failed) == ("succeeded", 2, 0)
    entries = redis_client.xrange(parking)
    assert [fields[b"body"] for _, fields in entries] == [b"m0", b"m1"]
    assert DeadLetter.objects.get(pk=held[0].pk).replayed_to == parking


def test_a_missing_destination_stream_is_not_created_and_the_letter_stays_held(redis_client, names, held, operator):
    nowhere = names("typo")
    job = move(operator, [held[0].id], nowhere)
    assert (job.status, job.done, job.failed) == ("failed", 0, 1)
    assert not redis_client.exists(nowhere)
    assert DeadLetter.objects.get(pk=held[0].pk).state == "held"
    refused = AuditEvent.objects.get(action="move", outcome="failed")
    assert "no stream named" in refused.details["errors"][0]


def test_a_replay_whose_origin_stream_was_deleted_is_refused(redis_client, poisoned, held, operator):
    redis_client.delete(poisoned.stream)
    job = replay(operator, [held[0].id])
    assert (job.done, job.failed) == (0, 1)
    assert not redis_client.exists(poisoned.stream)
    assert DeadLetter.objects.get(pk=held[0].pk).state == "held"


def test_a_destination_that_is_not_a_stream_is_refused(redis_client, names, held, operator):
    plain = names("plain-key")
    redis_client.set(plain, "not a stream")
    job = move(operator, [held[0].id], plain)
    assert (job.done, job.failed) == (0, 1)
    assert redis_client.get(plain) == b"not a stream"
