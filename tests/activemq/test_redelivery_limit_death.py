"""A real JMS consumer whose listener keeps throwing: its client's redelivery policy gives up
and ActiveMQ dead-letters the message with ``dlqDeliveryFailureCause``. The letter reads as a
redelivery-limit death with the listener's exception, and is replayed to its origin once."""

from __future__ import annotations

import pytest

from console.models import DeadLetter
from console.services.custody import REPLAY_ID_HEADER
from tests.activemq import flow
from tests.activemq.kit import fail_with_jms

pytestmark = pytest.mark.activemq


def test_redelivery_limit_death_is_read_and_replayed(amq, names, make_broker, operator):
    queue, dlq = names.individual("orders")
    amq.send(queue, b'{"order": 12}', headers={"customer": ""})
    fail_with_jms(queue, max_redeliveries=2)
    (copy,) = amq.wait_for(dlq, 1)
    assert "exceeds redelivery policy limit" in copy.headers["dlqDeliveryFailureCause"]

    place = flow.discovered(make_broker(known_queues=[queue]), operator, dlq)
    assert flow.capture(place, operator).done == 1
    (letter,) = DeadLetter.objects.filter(place=place)
    assert letter.reason == "max_redeliveries"
    assert letter.death_count == 3  # the first delivery and two redeliveries
    assert letter.exception_type == "java.lang.IllegalStateException"
    assert letter.exception_message == "order 12 has no customer"
    assert letter.origin_queue == queue

    assert flow.replay(operator, [letter.pk]).done == 1
    (frame,) = amq.receive_all(queue)
    assert frame.body == b'{"order": 12}'
    assert frame.headers[REPLAY_ID_HEADER] == DeadLetter.objects.get(pk=letter.pk).replay_id
    assert "dlqDeliveryFailureCause" not in frame.headers
