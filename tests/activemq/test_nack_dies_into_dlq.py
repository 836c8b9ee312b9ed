"""A real failing consumer: a STOMP NACK dead-letters the message at once, into the shared
ActiveMQ.DLQ for an ordinary queue and into DLQ.<queue> for an indiv.* queue; discovery finds
the places with their depth and origins, and the letters read as poison acks."""

from __future__ import annotations

import pytest

from console.brokers.activemq.places import SHARED_DLQ
from console.brokers.base import BrokerConfig, PlaceRef
from console.brokers.registry import get_adapter
from tests.activemq.conftest import ACTIVEMQ_URL

pytestmark = pytest.mark.activemq


def adapter(**options):
    return get_adapter(BrokerConfig(kind="activemq", url=ACTIVEMQ_URL, options=options))


def test_nack_on_an_ordinary_queue_lands_in_the_shared_dlq(amq, names):
    orders = names("orders")
    amq.send(orders, b'{"order": 1}', headers={"customer": "acme"})
    amq.fail_all(orders, 1)

    (copy,) = amq.wait_for(SHARED_DLQ, 1)
    assert copy.headers["original-destination"] == f"/queue/{orders}"
    assert "dlqDeliveryFailureCause" not in copy.headers  # a NACK gives no cause
    assert amq.browse(orders) == []

    with adapter() as amq_adapter:
        letters = [r for r in amq_adapter.peek(PlaceRef(SHARED_DLQ), 10_000)
                   if r.envelope.origin_queue == orders]
    (letter,) = letters
    assert letter.body == b'{"order": 1}'
    assert letter.headers["customer"] == "acme"
    assert letter.envelope.reason == "poison_ack"
    assert letter.envelope.origin_address == f"/queue/{orders}"
    assert letter.envelope.death_count == 1
    assert letter.properties["persistent"] == "true"
    assert letter.properties["bytes_message"] is False


def test_nack_on_an_individual_queue_lands_in_its_own_dlq_and_is_discovered(amq, names):
    queue, dlq = names.individual("billing")
    for n in range(3):
        amq.send(queue, f"invoice {n}".encode())
    amq.fail_all(queue, 3)
    assert len(amq.wait_for(dlq, 3)) == 3
    assert [f for f in amq.mine(SHARED_DLQ) if queue in f.headers.get("original-destination", "")] == []

    with adapter(known_queues=[queue]) as amq_adapter:
        found = {p.name: p for p in amq_adapter.discover()}
    place = found[dlq]
    assert place.depth == 3
    assert place.origins == [queue]
    assert place.discovered_by == "convention"
    assert place.oldest_at is not None
    assert SHARED_DLQ in found  # always listed
    assert place.details["depth_is_lower_bound"] is False

    with adapter(known_queues=[queue], count_limit=2) as amq_adapter:
        (counted,) = [p for p in amq_adapter.discover() if p.name == dlq]
    assert (counted.depth, counted.details["depth_is_lower_bound"]) == (2, True)
    assert len(amq.mine(dlq)) == 3  # counting stopped early, and took nothing


def test_a_configured_dead_place_is_listed_even_when_empty(amq, names):
    parked = names("parked")
    with adapter(dead_places=[parked]) as amq_adapter:
        found = {p.name: p for p in amq_adapter.discover()}
    assert found[parked].depth == 0
    assert found[parked].discovered_by == "configured"
