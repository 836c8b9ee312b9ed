"""On every broker: the letters a capture stores count in their origin's streak (three in a row
from the real failing consumer), and GET /api/origins/ lists that origin with its breaker, its
streak and its policy in words, asked of the broker (or said not to be told)."""

from __future__ import annotations

from rest_framework.test import APIClient

from console.models import Origin
from tests.contract.conftest import BODIES
from tests.flow import capture, letters_of


def test_a_captured_origin_is_listed_with_its_streak_and_policy(harness, broker, dead):
    capture(dead, harness.operator)
    origin_queue = {letter.origin_queue for letter in letters_of(dead)}
    assert len(origin_queue) == 1 and "" not in origin_queue
    origin = Origin.objects.get(broker=broker, scope=dead.scope, name=origin_queue.pop())
    assert origin.streak_any == len(BODIES)

    api = APIClient()
    api.force_authenticate(harness.operator)
    answer = api.get("/api/origins/", {"broker": broker.pk})
    assert answer.status_code == 200, answer.content
    (listed,) = answer.json()
    assert (listed["id"], listed["streak"]["any"]) == (origin.pk, len(BODIES))
    assert listed["policy"] and "\n" not in listed["policy"]
    if broker.kind in ("rabbitmq", "nats", "redis"):  # the brokers that tell
        assert not listed["policy"].startswith("not told"), listed["policy"]
