"""Through the services, as an operator: a NACKed message is discovered in the shared
ActiveMQ.DLQ, captured with its envelope, replayed to its origin queue, and the origin's
consumer receives it once, with the replay id, as the same kind of message it was."""

from __future__ import annotations

import pytest

from console.brokers.activemq.places import SHARED_DLQ
from console.models import DeadLetter, LetterState
from console.services.custody import REPLAY_ID_HEADER
from tests.activemq import flow

pytestmark = pytest.mark.activemq


def test_nacked_letter_is_replayed_to_its_origin_once(amq, names, make_broker, operator):
    orders = names("orders")
    amq.send(orders, "Bestellung über 12 €".encode(), headers={"customer": "acme", "type": "OrderPlaced"})
    amq.send(orders, b"\x00\x01binary\xff", bytes_message=True)
    amq.fail_all(orders, 2)
    assert len(amq.wait_for(SHARED_DLQ, 2)) == 2

    place = flow.discovered(make_broker(), operator, SHARED_DLQ)
    assert orders in place.origins
    assert place.depth >= 2

    job = flow.capture(place, operator)
    assert job.status == "succeeded", job.error
    text, binary = flow.letters_from(orders)
    assert amq.mine(SHARED_DLQ) == []  # captured letters left the broker

    assert text.body_bytes == "Bestellung über 12 €".encode()
    assert text.reason == "poison_ack"
    assert text.origin_address == f"/queue/{orders}"
    assert text.headers["customer"] == "acme"
    assert text.properties["type"] == "OrderPlaced"
    assert binary.body_bytes == b"\x00\x01binary\xff"

    job = flow.replay(operator, [text.pk, binary.pk])
    assert (job.status, job.done, job.failed) == ("succeeded", 2, 0), job.log

    delivered = amq.receive_all(orders)
    assert [f.body for f in delivered] == ["Bestellung über 12 €".encode(), b"\x00\x01binary\xff"]
    text_frame, binary_frame = delivered
    for frame, letter in ((text_frame, text), (binary_frame, binary)):
        letter.refresh_from_db()
        assert letter.state == LetterState.REPLAYED
        assert frame.headers[REPLAY_ID_HEADER] == letter.replay_id
        assert frame.headers["persistent"] == "true"  # persistent stays persistent
        assert "original-destination" not in frame.headers
        assert "dlqDeliveryFailureCause" not in frame.headers
    # Text stays text: ActiveMQ sends content-length for a BytesMessage only.
    assert "content-length" not in text_frame.headers
    assert binary_frame.headers["content-length"] == str(len(b"\x00\x01binary\xff"))
    assert text_frame.headers["customer"] == "acme"
    assert text_frame.headers["type"] == "OrderPlaced"
    assert amq.mine(SHARED_DLQ) == []
    assert DeadLetter.objects.filter(parent__isnull=False).count() == 0


def test_non_persistent_stays_non_persistent(amq, names, make_broker, operator):
    """A poison-acked non-persistent message is dropped by the shared strategy, so this one is
    made by hand on an individual queue's DLQ place (configured) and moved back."""
    queue, dlq = names.individual("telemetry")
    amq.send(dlq, b"reading 7", persistent=False, headers={"original-destination": f"/queue/{queue}"})
    place = flow.discovered(make_broker(dead_places=[dlq]), operator, dlq)
    assert place.depth == 1
    job = flow.capture(place, operator)
    assert job.done == 1
    (letter,) = DeadLetter.objects.filter(place=place)
    job = flow.move(operator, [letter.pk], queue)
    assert job.done == 1, job.log
    (frame,) = amq.receive_all(queue)
    assert frame.body == b"reading 7"
    assert "persistent" not in frame.headers
