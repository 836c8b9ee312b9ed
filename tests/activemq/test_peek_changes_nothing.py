"""Peeking browses (browser:true): the letters stay, in order, not flagged as redelivered."""

from __future__ import annotations

import time

import pytest

from console.brokers.activemq.multiplex import MultiLink
from console.brokers.activemq.reader import ActiveMQReader
from console.brokers.base import BrokerConfig, PlaceRef
from console.brokers.registry import get_adapter
from tests.activemq.conftest import ACTIVEMQ_URL

pytestmark = pytest.mark.activemq


def test_peek_leaves_letters_as_they_were(amq, nacked):
    queue, dlq = nacked([f"order {n}".encode() for n in range(5)])
    before = amq.mine(dlq)

    with get_adapter(BrokerConfig(kind="activemq", url=ACTIVEMQ_URL)) as adapter:
        first = adapter.peek(PlaceRef(dlq), 3)
        again = adapter.peek(PlaceRef(dlq), 10)
        # Read by a reader that shows ActiveMQ's own flag (a capture flags every message it
        # consumes redelivered: the broker's flag does not survive its restart).
        with ActiveMQReader(adapter, MultiLink(adapter.config), adapter.options, per_place=10,
                            assume_redelivered=False) as reader:
            reader.follow([PlaceRef(dlq)])
            taken, deadline = [], time.monotonic() + 5
            while len(taken) < 5 and time.monotonic() < deadline:
                taken += reader.take(10, wait_seconds=1).get(PlaceRef(dlq), [])

    assert [r.body for r in first] == [b"order 0", b"order 1", b"order 2"]
    assert [r.body for r in again] == [f"order {n}".encode() for n in range(5)]
    assert all(r.envelope.origin_queue == queue for r in again)
    after = amq.mine(dlq)
    assert [f.headers["message-id"] for f in after] == [f.headers["message-id"] for f in before]
    # The first consumer after the peeks gets them in order, never delivered before (the broker says).
    assert [r.body for r in taken] == [f"order {n}".encode() for n in range(5)]
    assert [r.redelivered for r in taken] == [False] * 5
