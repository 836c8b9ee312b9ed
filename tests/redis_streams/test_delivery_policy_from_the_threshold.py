"""Issue 17, point 8 for Redis Streams: Redis counts deliveries but limits none, so an origin's
policy is the adapter's own threshold, as GET /api/origins/ shows it."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from console.models import Origin

pytestmark = [pytest.mark.redis, pytest.mark.django_db]


def test_the_origin_policy_is_the_adapters_threshold(redis_broker, operator, names):
    redis_broker.options = {**redis_broker.options, "threshold": 4, "min_idle_ms": 30_000}
    redis_broker.save(update_fields=["options"])
    Origin.objects.create(broker=redis_broker, scope=names("orders"), name=names("orders"))
    api = APIClient()
    api.force_authenticate(operator)
    (origin,) = api.get("/api/origins/", {"broker": redis_broker.pk}).json()
    assert origin["policy"] == (
        "at most 4 deliveries (the console's threshold: Redis counts deliveries but limits none), "
        "then the console takes it from the group's pending entries once idle 30 s")
    assert (origin["breaker_open"], origin["streak"]["any"]) == (False, 0)
