"""Finding 9 on Redis (invariant 11): where an operator limited to places may publish is what
Redis says, the consumer groups of a stream, never a field an entry carries. Limited to a
group's pending entries, he replays them to their stream (XINFO GROUPS names his group on it)
but moves nothing into another stream. Limited to a dead stream, whose entries' ``orig_stream``
is only their content, a letter naming another stream does not replay there."""

from __future__ import annotations

import pytest

from console.access.roles import OPERATOR, set_role
from console.jobs.door.requests import request_job
from console.models import DeadLetter, RoleScope
from console.services.jobs import JobError
from tests.redis_streams.consumers import PoisonedGroup
from tests.redis_streams.flow import capture, discovered, finished

pytestmark = [pytest.mark.redis, pytest.mark.django_db]


@pytest.fixture
def otto(django_user_model):
    user = django_user_model.objects.create_user("otto")
    set_role(user, OPERATOR)
    return user


def test_limited_to_a_group_he_replays_to_its_stream_and_nowhere_else(
        redis_client, names, poisoned, redis_broker, operator, otto):
    payments = PoisonedGroup(redis_client, names("payments"), "settle").create()
    redis_client.xadd(poisoned.stream, {"body": "one"})
    poisoned.fail(times=4)
    place = discovered(redis_broker, operator, poisoned.group, scope=poisoned.stream)
    capture(place, operator)
    (letter,) = DeadLetter.objects.filter(place=place)
    RoleScope.objects.create(user=otto, place=place)

    with pytest.raises(JobError, match=f"{payments.stream!r} is outside what you may act on"):
        request_job("move", actor=otto, reason="park it", ids=[letter.pk], target=payments.stream)
    assert redis_client.xlen(payments.stream) == 0

    job = finished(request_job("replay", actor=otto, reason="fixed", ids=[letter.pk]))
    assert (job.status, job.done) == ("succeeded", 1)
    assert [fields[b"body"] for _, fields in poisoned.read_new()] == [b"one"]


def test_a_dead_stream_entry_naming_another_stream_does_not_replay_there(
        redis_client, names, redis_broker, operator, otto):
    payments = PoisonedGroup(redis_client, names("payments"), "settle").create()
    dead = names("refunds") + ":dlq"
    redis_client.xadd(dead, {"body": "forged", "orig_stream": payments.stream, "orig_id": "1-0",
                             "group": "settle", "deliveries": 5, "error": "ValueError: no"})
    place = discovered(redis_broker, operator, dead)
    capture(place, operator)
    (letter,) = DeadLetter.objects.filter(place=place)
    assert letter.origin_queue == payments.stream  # what the entry says
    RoleScope.objects.create(user=otto, place=place)

    with pytest.raises(JobError, match=f"{payments.stream!r} is outside what you may act on"):
        request_job("replay", actor=otto, reason="retry", ids=[letter.pk])
    assert redis_client.xlen(payments.stream) == 0
