"""Fixtures for the Redis Streams adapter's tests: the real Redis on 127.0.0.1:6379.

Every test gets key names with a fresh suffix (``names``) and every key made under them is
deleted afterwards, so tests never see each other's streams.
"""

from __future__ import annotations

import os
import uuid

import pytest
import redis

from tests.redis_streams.consumers import DeadStreamWorker, PoisonedGroup

REDIS_URL = os.environ.get("DLO_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
#: Tests use no idle wait: entries are over the threshold the moment they are.
TEST_OPTIONS = {"threshold": 3, "min_idle_ms": 0}


class Names:
    """Unique key names for one test; ``cleanup`` deletes every key made from them."""

    def __init__(self) -> None:
        self.suffix = uuid.uuid4().hex[:10]

    def __call__(self, base: str) -> str:
        return f"dlo-test:{base}:{self.suffix}"

    def cleanup(self, client: redis.Redis) -> None:
        keys = list(client.scan_iter(match=f"*{self.suffix}*", count=1000))
        if keys:
            client.delete(*keys)


@pytest.fixture
def redis_client():
    client = redis.Redis.from_url(REDIS_URL)
    yield client
    client.close()


@pytest.fixture
def names(redis_client):
    made = Names()
    yield made
    made.cleanup(redis_client)


@pytest.fixture
def redis_broker(db, operator):
    """The Broker row for the real Redis, added through the service as an operator would."""
    from console.services.brokers import do_add_broker

    return do_add_broker(actor=operator, name="redis", kind="redis", url=REDIS_URL, options=dict(TEST_OPTIONS))


@pytest.fixture
def poisoned(redis_client, names):
    """A stream ``orders`` with a group ``billing`` whose worker fails everything."""
    return PoisonedGroup(redis_client, names("orders"), "billing").create()


@pytest.fixture
def dead_stream_worker(redis_client, names):
    """A stream whose worker gives up on entries by moving them to ``<stream>:dlq``."""
    return DeadStreamWorker(redis_client, names("orders"), "billing").create()
