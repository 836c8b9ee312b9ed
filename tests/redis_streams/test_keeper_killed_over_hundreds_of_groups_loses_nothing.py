"""The kept-place crash scenario (tests.keeper_crash) on Redis Streams with 200 kept consumer
groups, one per stream: ten SIGKILLs of the keeper and a restart of the server, and every
entry delivered past the threshold is kept once and acknowledged in its group.

The server is a private redis-server (tests.redis_streams.private_server), never the shared one."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
import redis

from console.models import DeadPlace
from console.services.brokers import do_add_broker, do_discover
from tests.keeper_crash import body_of, place_of, survives_kills_and_a_restart
from tests.redis_streams.conftest import TEST_OPTIONS
from tests.redis_streams.consumers import autoclaim_all
from tests.redis_streams.private_server import PrivateRedis

pytestmark = [pytest.mark.keeper, pytest.mark.slow, pytest.mark.redis, pytest.mark.django_db(transaction=True)]

PLACES = 200
#: Entries that die into each group before each kill: 1,000 a round, 10,000 in all.
PER_PLACE = 5
GROUP, WORKER = "billing", "worker-1"


@pytest.fixture
def private_redis(tmp_path):
    server = PrivateRedis(tmp_path / "redis")
    server.start()
    yield server
    server.close()


class RedisSite:
    can_restart = True

    def __init__(self, server: PrivateRedis) -> None:
        self.server = server
        self.client = redis.Redis.from_url(server.url, retry_on_error=[redis.ConnectionError])
        self.streams: list[str] = []

    def make_places(self, count: int) -> list[DeadPlace]:
        self.streams = [f"orders-{n:04d}" for n in range(count)]
        with self.client.pipeline(transaction=False) as pipe:
            for stream in self.streams:
                pipe.xgroup_create(stream, GROUP, id="$", mkstream=True)
            pipe.execute()
        broker = do_add_broker(actor="tests", name="redis-private", kind="redis", url=self.server.url,
                               options=dict(TEST_OPTIONS))
        found = {(place.scope, place.name): place for place in do_discover(broker, actor="tests")}
        return [found[(stream, GROUP)] for stream in self.streams]

    def let_die(self, first: int, count: int) -> None:
        """The group's worker reads the new entries and fails them until they are past the
        threshold (read once, then reclaimed: TEST_OPTIONS' threshold is 3)."""
        with self.client.pipeline(transaction=False) as pipe:
            for n in range(first, first + count):
                pipe.xadd(self.streams[place_of(n, len(self.streams))], {"body": body_of(n)})
            pipe.execute()
        with self.client.pipeline(transaction=False) as pipe:
            for stream in self.streams:
                pipe.xreadgroup(GROUP, WORKER, {stream: ">"})
            pipe.execute()
        for _ in range(TEST_OPTIONS["threshold"]):
            for stream in self.streams:
                autoclaim_all(self.client, stream, GROUP, WORKER, page=100)

    def restart_broker(self) -> None:
        self.server.stop()
        self.server.start()

    def depths(self, places: Sequence[DeadPlace]) -> int:
        """Entries pending in the groups (XPENDING), as redis-cli shows them."""
        with self.client.pipeline(transaction=False) as pipe:
            for place in places:
                pipe.xpending(place.scope, place.name)
            return sum(summary["pending"] for summary in pipe.execute())

    def after_kill(self) -> None:
        """Nothing to wait for: a killed reader's pending entries stay in the group's list."""


def test_every_entry_of_two_hundred_groups_is_kept_once_through_kills_and_a_server_restart(
        private_redis, keeper, operator):
    survives_kills_and_a_restart(RedisSite(private_redis), keeper, operator, places=PLACES, per_place=PER_PLACE)
