"""Issue 17, point 8 on the real nats-server: a consumer's ``max_deliver`` and ``backoff`` (else
its ack wait) in plain words, and a consumer that is not there said so."""

from __future__ import annotations

import pytest
from nats.js.api import AckPolicy, ConsumerConfig

from console.brokers import BrokerConfig, PlaceRef
from console.brokers.nats.adapter import NatsAdapter
from console.letters.policy import describe
from tests.nats.conftest import NATS_URL

pytestmark = pytest.mark.nats


@pytest.fixture
def adapter():
    nats = NatsAdapter(BrokerConfig(kind="nats", url=NATS_URL))
    yield nats
    nats.close()


def test_max_deliver_with_a_backoff_and_with_the_ack_wait(failing_consumer, nats_tool, adapter):
    source = failing_consumer()
    nats_tool(lambda js: js.add_consumer(source.stream, ConsumerConfig(
        durable_name="billing", max_deliver=5, backoff=[1.0, 5.0, 30.0], ack_wait=1.0,
        ack_policy=AckPolicy.EXPLICIT)))
    assert describe(adapter.delivery_policy(PlaceRef("billing", source.stream))) == (
        f"at most 5 deliveries, waiting 1 s, 5 s, 30 s, then a MAX_DELIVERIES advisory (the message stays in "
        f"stream {source.stream})")
    assert describe(adapter.delivery_policy(source.place)) == (
        f"at most 2 deliveries, then a MAX_DELIVERIES advisory (the message stays in stream {source.stream}); "
        "redelivered after the ack wait (1 s)")
    assert describe(adapter.delivery_policy(PlaceRef("nobody", source.stream))) == (
        f"not told by the broker; no consumer nobody on stream {source.stream}")
