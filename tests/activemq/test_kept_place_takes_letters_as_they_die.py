"""A DLQ of the real ActiveMQ kept in custody: a message NACKed into it after keeping was
turned on is in custody within 5 s, taken by the keeper process, and gone from the broker."""

from __future__ import annotations

import time

import pytest

from tests.flow import discovered, in_custody_within, keep

pytestmark = [pytest.mark.keeper, pytest.mark.activemq, pytest.mark.django_db(transaction=True)]


def test_a_letter_nacked_into_a_kept_dlq_is_in_custody_within_seconds(amq, nacked, make_broker, operator, keeper):
    queue, dlq = nacked([b"died before keeping"])
    place = keep(discovered(make_broker(dead_places=[dlq]), operator, dlq), operator)
    keeper.start()
    in_custody_within(place, b"died before keeping", seconds=15)  # the keeper's first look includes start-up

    amq.send(queue, b"died while kept")
    amq.fail_all(queue, 1)
    in_custody_within(place, b"died while kept")
    kit_wait = time.monotonic() + 5
    while amq.mine(dlq) and time.monotonic() < kit_wait:  # acknowledged just after the commit
        time.sleep(0.1)
    assert amq.mine(dlq) == []
