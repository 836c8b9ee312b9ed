"""A hostile message whose header tables nest deeper than the AMQP client can decode: the
capture fails at once with an error that says what and what to do, and nothing is lost (the
message and those behind it stay on the broker)."""

from __future__ import annotations

import sys

import pytest

from console.models import DeadLetter, Job

pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db]


def nested(depth: int) -> dict:
    value: object = "leaf"
    for _ in range(depth):
        value = {"n": value}
    return value


def test_a_message_too_deep_to_read_fails_the_capture_clearly_and_stays(kit, rabbit_broker, operator):
    from console.jobs.door.requests import request_job
    from console.jobs.door.runner import run_job
    from console.services.brokers import do_discover

    dlq = kit.queue(kit.name("deep") + ".dlq")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(20_000)  # the hostile producer's client can write it; ours must read it
    try:
        kit.publish(dlq, b"deep", headers={"deep": nested(600)})
    finally:
        sys.setrecursionlimit(limit)
    kit.publish(dlq, b"behind it", headers={})
    kit.wait_depth(dlq, 2)
    (place,) = [p for p in do_discover(rabbit_broker, actor=operator) if p.name == dlq]

    job = request_job("capture", place=place, actor=operator, reason="triage")
    assert run_job(job.pk) == Job.Status.FAILED
    job.refresh_from_db()
    assert "headers nest deeper than the AMQP client can decode" in job.error
    assert "stays on the broker" in job.error
    assert kit.depth(dlq) == 2 and not DeadLetter.objects.filter(place=place).exists()
