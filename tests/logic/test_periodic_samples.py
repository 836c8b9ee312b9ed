"""Broker health checks and place samples, on the in-memory broker."""

from __future__ import annotations

import pytest

from console.brokers.memory.adapter import Message
from console.jobs.automation.periodic import check_brokers, sample_places
from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import Broker, PlaceSample
from console.services.brokers import do_discover

pytestmark = pytest.mark.django_db


def test_samples_record_depth_held_and_arrivals(memory_broker, operator):
    fake, broker = memory_broker
    for i in range(3):
        fake.queue("pay.dlq").append(Message(b"x%d" % i, {"x-origin-queue": "pay"}))
    (place,) = do_discover(broker, actor=operator)
    sample_places()
    run_job(request_job("capture", place=place, actor=operator, reason="r", limit=2).pk)
    sample_places()
    first, second = PlaceSample.objects.filter(place=place).order_by("at")
    assert (first.depth, first.held) == (3, 0)
    assert (second.depth, second.held, second.arrivals) == (1, 2, 2)


def test_an_unreachable_broker_is_marked_down_and_sampling_goes_on(memory_broker, operator):
    fake, broker = memory_broker
    fake.queue("pay.dlq")
    (place,) = do_discover(broker, actor=operator)
    fake.down = True
    assert check_brokers() == {"mem": False}
    assert sample_places() == 1
    broker.refresh_from_db()
    assert broker.reachable is False and "down" in broker.last_error
    assert PlaceSample.objects.get(place=place).depth is None
    fake.down = False
    assert check_brokers() == {"mem": True}
    assert Broker.objects.get(pk=broker.pk).reachable is True
