"""Walking a pending entries list longer than one page ends, and takes every entry once."""

from __future__ import annotations

import pytest

from console.models import DeadLetter
from console.services.brokers import do_add_broker
from tests.redis_streams.conftest import REDIS_URL, TEST_OPTIONS
from tests.redis_streams.consumers import autoclaim_all
from tests.redis_streams.flow import capture, discovered

pytestmark = [pytest.mark.redis, pytest.mark.django_db]


def test_an_autoclaim_loop_follows_the_cursor_to_the_end(redis_client, poisoned):
    ids = [redis_client.xadd(poisoned.stream, {"n": str(i)}) for i in range(35)]
    redis_client.xreadgroup(poisoned.group, "worker-1", {poisoned.stream: ">"})
    assert autoclaim_all(redis_client, poisoned.stream, poisoned.group, "worker-1", page=10) == ids
    assert set(poisoned.deliveries().values()) == {2}


def test_capture_pages_through_more_entries_than_one_page(redis_client, poisoned, operator):
    broker = do_add_broker(actor=operator, name="redis-small-pages", kind="redis", url=REDIS_URL,
                           options={**TEST_OPTIONS, "page_size": 4})
    for i in range(11):
        redis_client.xadd(poisoned.stream, {"body": f"m{i}"})
    poisoned.fail(times=4)
    # Entries under the threshold in between must not stop the walk.
    for i in range(5):
        redis_client.xadd(poisoned.stream, {"body": f"young{i}"})
    redis_client.xreadgroup(poisoned.group, "worker-1", {poisoned.stream: ">"})

    place = discovered(broker, operator, poisoned.group, scope=poisoned.stream)
    assert place.depth == 11
    job = capture(place, operator)
    assert (job.status, job.done) == ("succeeded", 11)
    assert [bytes(b) for b in DeadLetter.objects.order_by("id").values_list("body", flat=True)] == [
        f"m{i}".encode() for i in range(11)]
    assert list(poisoned.deliveries().values()) == [1] * 5
