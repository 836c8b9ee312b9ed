"""JetStream announces a death once, as a fire-and-forget advisory: the console's advisory
stream keeps it, so a death while no console process runs is still captured later."""

from __future__ import annotations

import pytest

from console.brokers import BrokerConfig
from console.brokers.nats.adapter import NatsAdapter
from tests.nats.conftest import NATS_URL
from tests.nats.flow import capture, discover_place, letters_of

pytestmark = [pytest.mark.nats, pytest.mark.django_db]


def test_a_death_while_no_console_runs_is_captured_afterwards(nats_broker, failing_consumer):
    adapter = NatsAdapter(BrokerConfig(kind="nats", url=NATS_URL))
    assert adapter.check()["advisory_stream"] == "DLO_ADVISORIES"
    adapter.close()  # the console is down from here on: nobody subscribes to the advisories

    source = failing_consumer()
    source.publish(b"died alone")
    source.fail_until_dead(1)

    place = discover_place(nats_broker, source)  # the console comes back
    assert place.depth == 1
    capture(place)
    assert [letter.body_bytes for letter in letters_of(place)] == [b"died alone"]


def test_a_death_after_a_capture_is_taken_by_the_next_capture(nats_broker, failing_consumer):
    source = failing_consumer()
    place = discover_place(nats_broker, source)
    assert capture(place).done == 0  # nothing has died yet

    source.publish(b"late")
    source.fail_until_dead(1)  # the advisory comes when the server gives up, after the capture
    assert capture(place).done == 1
    assert [letter.reason for letter in letters_of(place)] == ["max_deliver"]
