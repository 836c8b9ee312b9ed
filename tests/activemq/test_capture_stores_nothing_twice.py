"""Capture is at least once on the wire and exactly once in custody: a session closed before
its ack leaves the letters in the DLQ; a capture that committed but never acked, then a
second capture, stores each letter once; capturing an emptied place stores nothing."""

from __future__ import annotations

import pytest

from console.brokers.base import PlaceRef
from console.models import DeadLetter
from console.services.custody import store_captured
from tests.activemq import flow

pytestmark = pytest.mark.activemq


def test_a_session_closed_before_ack_leaves_the_letters(amq, nacked, make_broker):
    _, dlq = nacked([f"order {n}".encode() for n in range(3)])
    broker = make_broker(dead_places=[dlq])

    with broker.adapter() as adapter, adapter.open_capture(PlaceRef(dlq), prefetch=10) as session:
        assert len(session.next_batch(10, wait_seconds=2)) == 3
    left = amq.mine(dlq)
    assert [f.body for f in left] == [b"order 0", b"order 1", b"order 2"]


def test_committed_but_unacked_letters_are_not_stored_twice(amq, nacked, make_broker, operator):
    _, dlq = nacked([f"order {n}".encode() for n in range(4)])
    place = flow.discovered(make_broker(dead_places=[dlq]), operator, dlq)

    # A capture that stored two letters and died before acknowledging them.
    with place.broker.adapter() as adapter, adapter.open_capture(place.ref, prefetch=2) as session:
        batch = session.next_batch(2, wait_seconds=2)
        store_captured(place, batch, job=None, actor=operator)
    assert len(amq.mine(dlq)) == 4

    job = flow.capture(place, operator)
    assert job.status == "succeeded", job.error
    bodies = sorted(bytes(b) for b in DeadLetter.objects.filter(place=place).values_list("body", flat=True))
    assert bodies == [f"order {n}".encode() for n in range(4)]
    assert amq.mine(dlq) == []

    again = flow.capture(place, operator)
    assert again.done == 0
    assert DeadLetter.objects.filter(place=place).count() == 4
