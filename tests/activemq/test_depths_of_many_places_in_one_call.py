"""The depths of many ActiveMQ dead places asked at once (what the keeper's fallback and the
pages ask): each place's own count, counted over the adapter's one connection."""

from __future__ import annotations

import pytest

from console.brokers.activemq.adapter import ActiveMQAdapter
from console.brokers.base import BrokerConfig, PlaceRef
from tests.activemq.conftest import ACTIVEMQ_URL

pytestmark = pytest.mark.activemq


def test_depths_of_forty_places_each_counted(amq, names):
    places = [names(f"DLQ.depth{i}") for i in range(40)]
    for i, name in enumerate(places):
        for n in range(i % 4):
            amq.send(name, b"letter %d" % n)
    shared = PlaceRef(places[5])  # asked twice: answered once

    with ActiveMQAdapter(BrokerConfig(kind="activemq", url=ACTIVEMQ_URL)) as adapter:
        depths = adapter.depths([PlaceRef(name) for name in places] + [shared])

    assert depths == {PlaceRef(name): i % 4 for i, name in enumerate(places)}
    assert amq.mine(places[3]) != []  # counting consumed nothing


def test_a_depth_stops_at_the_count_limit(amq, names):
    place = names("DLQ.depth.limited")
    for n in range(7):
        amq.send(place, b"letter %d" % n)

    with ActiveMQAdapter(BrokerConfig(kind="activemq", url=ACTIVEMQ_URL, options={"count_limit": 5})) as adapter:
        assert adapter.depths([PlaceRef(place)]) == {PlaceRef(place): 5}
