"""A JetStream consumer's dead letters kept in custody: a message whose deliveries ran out after
keeping was turned on is in custody within 5 s, taken by the keeper process."""

from __future__ import annotations

import pytest

from tests.flow import in_custody_within, keep
from tests.nats.flow import discover_place

pytestmark = [pytest.mark.keeper, pytest.mark.nats, pytest.mark.django_db(transaction=True)]


def test_a_message_out_of_deliveries_is_in_custody_within_seconds(nats_broker, failing_consumer, operator, keeper):
    source = failing_consumer()
    source.publish(b"died before keeping")
    source.fail_until_dead(1)
    place = keep(discover_place(nats_broker, source), operator)
    keeper.start()
    in_custody_within(place, b"died before keeping", seconds=15)  # the keeper's first look includes start-up

    source.publish(b"died while kept")
    source.fail_until_dead(2)  # deaths of this consumer in all
    in_custody_within(place, b"died while kept")
