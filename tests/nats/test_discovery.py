"""Discovery: durable consumers with max_deliver are the sources; each is a dead place whose
depth counts its recorded deaths, without touching the stream's messages."""

from __future__ import annotations

import pytest
from nats.js.api import AckPolicy, ConsumerConfig

from console.models import DeadPlace
from console.services.brokers import do_discover
from tests.nats.flow import capture, discover_place, letters_of

pytestmark = [pytest.mark.nats, pytest.mark.django_db]


def test_only_consumers_that_give_up_are_dead_places(nats_broker, failing_consumer):
    source = failing_consumer()
    source.nats(lambda js: js.add_consumer(source.stream, ConsumerConfig(
        durable_name=f"patient_{source.consumer}", ack_policy=AckPolicy.EXPLICIT)))  # retries forever
    source.publish(b"x")
    source.fail_until_dead(1)
    consumer_before = source.consumer_state()

    mine = [p for p in do_discover(nats_broker, actor="tests") if p.scope == source.stream]
    assert [(p.name, p.kind, p.discovered_by, p.depth) for p in mine] == [
        (source.consumer, "consumer", "advisory", 1)]
    assert mine[0].details["max_deliver"] == source.MAX_DELIVER
    assert mine[0].oldest_at is not None
    assert source.consumer_state() == consumer_before


def test_deaths_of_a_deleted_consumer_can_still_be_captured(nats_broker, failing_consumer):
    source = failing_consumer()
    source.publish(b"orphan")
    source.fail_until_dead(1)
    place = discover_place(nats_broker, source)
    source.nats(lambda js: js.delete_consumer(source.stream, source.consumer))

    do_discover(nats_broker, actor="tests")
    assert DeadPlace.objects.get(pk=place.pk).gone
    capture(place)
    assert [letter.body_bytes for letter in letters_of(place)] == [b"orphan"]
    assert DeadPlace.objects.get(pk=place.pk).consumers == 0
