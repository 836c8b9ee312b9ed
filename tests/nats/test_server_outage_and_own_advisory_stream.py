"""On a nats-server of the test's own: a server that goes away in the middle of a capture
loses nothing and stores nothing twice; a site whose advisories another stream already keeps
is told so, and can point the console at that stream, which the console does not delete from."""

from __future__ import annotations

import pytest
from nats.js.api import StreamConfig

from console.brokers import BrokerConfig, BrokerError
from console.brokers.nats import advisories
from console.brokers.nats.adapter import NatsAdapter
from console.models import DeadLetter
from console.services.brokers import do_add_broker
from console.services.custody import store_captured
from tests.nats.conftest import FailingConsumer, Nats
from tests.nats.flow import capture, discover_place, letters_of

pytestmark = [pytest.mark.nats, pytest.mark.django_db]


@pytest.fixture
def private_tool(private_server):
    tool = Nats(private_server.url)
    yield tool
    tool.close()


def test_a_server_that_goes_away_mid_capture_loses_nothing(private_server, private_tool):
    broker = do_add_broker(actor="tests", name="nats-private", kind="nats", url=private_server.url,
                           options={"advisory_ack_wait": 1})
    broker.adapter().check()  # makes the advisory stream before the first death
    source = FailingConsumer(private_tool)
    for i in range(3):
        source.publish(f"order {i}".encode())
    source.fail_until_dead(3)
    place = discover_place(broker, source)

    with broker.adapter() as adapter:
        session = adapter.open_capture(place.ref, prefetch=2)
        batch = session.next_batch(2, 1.0)
        store_captured(place, batch, job=None, actor="worker")  # committed...
        private_server.stop()  # ...and the server goes away before the ack
        with pytest.raises(BrokerError) as lost:
            session.ack(batch)
        assert not lost.value.permanent
        session.close()

    private_server.start()
    assert capture(place).done == 3  # one never taken, two handed back by the server after ack_wait
    assert sorted(letter.body_bytes for letter in letters_of(place)) == [b"order 0", b"order 1", b"order 2"]
    assert not DeadLetter.objects.filter(place=place, pending_ack__isnull=False).exists()


def test_advisories_kept_by_another_stream_are_reported_and_can_be_used(private_server, private_tool):
    private_tool(lambda js: js.add_stream(StreamConfig(name="SITE_EVENTS", subjects=["$JS.EVENT.ADVISORY.>"])))
    with NatsAdapter(BrokerConfig(kind="nats", url=private_server.url)) as adapter:
        with pytest.raises(BrokerError) as refused:
            adapter.check()
    assert refused.value.permanent and "advisory_stream" in refused.value.message

    broker = do_add_broker(actor="tests", name="nats-site", kind="nats", url=private_server.url,
                           options={"advisory_stream": "SITE_EVENTS"})
    assert broker.adapter().check()["advisory_stream"] == "SITE_EVENTS"
    source = FailingConsumer(private_tool, advisory_stream="SITE_EVENTS")
    source.publish(b"kept by the site's stream")
    source.terminate_next()
    place = discover_place(broker, source)
    capture(place)
    assert [(letter.reason, letter.body_bytes) for letter in letters_of(place)] == [
        ("terminated", b"kept by the site's stream")]
    # The site's own stream is left as it is: the advisory stays, acknowledged, and is not taken again.
    assert source.advisories_waiting() == 1
    assert capture(place).done == 0
    assert advisories.STREAM not in [s.config.name for s in private_tool(lambda js: js.streams_info())]
