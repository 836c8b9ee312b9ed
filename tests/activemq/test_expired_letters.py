"""A persistent message whose time to live runs out in a queue nobody reads goes to the DLQ
with ActiveMQ's "Message Expired" cause: its reason is ``expired``, and its replay does not
expire again at once."""

from __future__ import annotations

import time

import pytest

from console.models import DeadLetter
from tests.activemq import flow

pytestmark = pytest.mark.activemq


def test_expired_message_is_captured_as_expired_and_replayed_without_its_ttl(amq, names, make_broker, operator):
    queue, dlq = names.individual("quotes")
    expires = int(time.time() * 1000) + 300
    amq.send(queue, b"quote 42", headers={"expires": str(expires)})
    time.sleep(0.6)
    assert amq.browse(queue) == []  # ActiveMQ checks expiry as the queue is paged in: by this browse
    amq.wait_for(dlq, 1)

    place = flow.discovered(make_broker(known_queues=[queue]), operator, dlq)
    assert place.origins == [queue]
    assert flow.capture(place, operator).done == 1
    (letter,) = DeadLetter.objects.filter(place=place)
    assert letter.reason == "expired"
    assert letter.origin_queue == queue
    assert abs(letter.last_failed_at.timestamp() * 1000 - expires) < 1
    assert letter.envelope_details["original_expiration"] == str(expires)

    assert flow.replay(operator, [letter.pk]).done == 1
    (frame,) = amq.receive_all(queue)
    assert frame.body == b"quote 42"
    assert frame.headers.get("expires", "0") == "0"
