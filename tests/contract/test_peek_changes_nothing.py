"""Peeking where the adapter declares it safe leaves every message as it was: presence, order
and the broker's delivery counters. Where it is not safe (RabbitMQ: a read is a redelivery),
the adapter says so and refuses, and nothing is touched."""

from __future__ import annotations

import pytest

from console.brokers import BrokerError
from tests.contract.conftest import BODIES


def test_peek_changes_nothing_or_is_refused(harness, broker, dead):
    before = harness.dead_state()
    with broker.adapter() as adapter:
        if type(adapter).can_peek_safely:
            first = adapter.peek(dead.ref, 10)
            second = adapter.peek(dead.ref, 10)
            assert [m.body for m in first] == [m.body for m in second] == BODIES
        else:
            assert adapter.capabilities()["peek"] is False
            with pytest.raises(BrokerError) as refused:
                adapter.peek(dead.ref, 10)
            assert refused.value.permanent
    assert harness.dead_state() == before
    assert harness.dead_count() == len(BODIES)
