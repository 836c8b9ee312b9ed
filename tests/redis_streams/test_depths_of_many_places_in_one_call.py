"""The depths of many Redis dead places asked at once: each group's count of entries over the
threshold, each dead stream's length, and a place that is not there left out, as ``stats``
tells them one by one."""

from __future__ import annotations

import pytest

from console.brokers.base import BrokerConfig, PlaceRef
from console.brokers.redis.adapter import RedisStreamsAdapter
from tests.redis_streams.conftest import REDIS_URL, TEST_OPTIONS
from tests.redis_streams.consumers import DeadStreamWorker, PoisonedGroup

pytestmark = pytest.mark.redis


def test_depths_of_groups_and_dead_streams_match_their_stats(redis_client, names):
    groups = [PoisonedGroup(redis_client, names(f"orders{i}"), "billing").create() for i in range(10)]
    workers = [DeadStreamWorker(redis_client, names(f"sent{i}"), "billing").create() for i in range(10)]
    for i, group in enumerate(groups[:4]):
        for n in range(i + 1):
            redis_client.xadd(group.stream, {"body": b"%d" % n})
        group.fail(times=4)
    redis_client.xadd(groups[5].stream, {"body": b"delivered once"})
    groups[5].fail(times=1)  # pending, under the threshold: no letter
    for i, worker in enumerate(workers[:3]):
        for n in range(2 * i + 1):
            redis_client.xadd(worker.stream, {"body": b"%d" % n})
        worker.fail_all()
    places = ([PlaceRef(g.group, scope=g.stream) for g in groups] + [PlaceRef(w.dead_stream) for w in workers])
    missing = [PlaceRef("billing", scope=names("no-stream")), PlaceRef("no-group", scope=groups[0].stream),
               PlaceRef(names("no-stream:dlq"))]

    with RedisStreamsAdapter(BrokerConfig(kind="redis", url=REDIS_URL, options=dict(TEST_OPTIONS))) as adapter:
        depths = adapter.depths(places + missing)
        assert depths == {place: adapter.stats(place).depth for place in places}
    assert [depths[PlaceRef(g.group, scope=g.stream)] for g in groups] == [1, 2, 3, 4, 0, 0, 0, 0, 0, 0]
    assert [depths[PlaceRef(w.dead_stream)] for w in workers] == [1, 3, 5, 0, 0, 0, 0, 0, 0, 0]
