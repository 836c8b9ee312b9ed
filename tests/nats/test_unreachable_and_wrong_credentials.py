"""A server that is not there, or that refuses the credentials, gives a clear BrokerError at
once (no endless reconnect loop) and the console changes nothing."""

from __future__ import annotations

import pytest

from console.brokers import BrokerConfig, BrokerError, PlaceRef
from console.brokers.nats.adapter import NatsAdapter
from console.models import Broker, DeadPlace
from console.services.brokers import check_broker, do_add_broker, do_discover

pytestmark = [pytest.mark.nats, pytest.mark.django_db]


def test_an_unreachable_server_is_a_clear_temporary_error_and_nothing_changes():
    broker = do_add_broker(actor="tests", name="nats-nowhere", kind="nats", url="nats://127.0.0.1:4999")
    with pytest.raises(BrokerError) as checked:
        check_broker(broker)
    assert not checked.value.permanent
    assert "127.0.0.1:4999" in checked.value.message and "unreachable" in checked.value.message
    with pytest.raises(BrokerError):
        do_discover(broker, actor="tests")
    broker.refresh_from_db()
    assert broker.reachable is False and "unreachable" in broker.last_error
    assert not DeadPlace.objects.filter(broker=broker).exists()

    with NatsAdapter(broker.config()) as adapter:
        with pytest.raises(BrokerError, match="unreachable"):
            adapter.open_capture(PlaceRef("worker", "ORDERS"), prefetch=10)


def test_wrong_credentials_are_a_permanent_error(guarded_server):
    broker = do_add_broker(actor="tests", name="nats-guarded", kind="nats", url=guarded_server,
                           username="dlo", password="wrong")
    with pytest.raises(BrokerError) as checked:
        check_broker(broker)
    assert checked.value.permanent and "credentials" in checked.value.message
    assert Broker.objects.get(pk=broker.pk).reachable is False


def test_the_right_credentials_get_in(guarded_server):
    # This server runs without JetStream: the console says so instead of failing obscurely.
    with NatsAdapter(BrokerConfig(kind="nats", url=guarded_server, username="dlo", password="right")) as adapter:
        with pytest.raises(BrokerError) as checked:
            adapter.check()
    assert checked.value.permanent and "JetStream is not enabled" in checked.value.message
