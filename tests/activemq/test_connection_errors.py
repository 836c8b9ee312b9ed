"""An unreachable broker is a clear, retryable error within seconds and changes nothing; a
reachable one reports its version."""

from __future__ import annotations

import socket

import pytest

from console.brokers.base import BrokerConfig, BrokerError, PlaceRef
from console.brokers.registry import get_adapter
from console.models import Broker, DeadPlace
from console.services.brokers import check_broker, do_discover
from tests.activemq.conftest import ACTIVEMQ_URL

pytestmark = pytest.mark.activemq

NOBODY = "stomp://127.0.0.1:61999"


def test_check_reports_the_version(make_broker):
    broker = make_broker()
    facts = check_broker(broker)
    assert facts["version"] == "5.17.2"
    assert Broker.objects.get(pk=broker.pk).version == "5.17.2"


def test_unreachable_broker_is_a_quick_retryable_error(make_broker, operator):
    broker = make_broker(name="gone", url=NOBODY)
    with pytest.raises(BrokerError) as caught:
        check_broker(broker)
    assert not caught.value.permanent
    assert "127.0.0.1:61999" in caught.value.message

    with pytest.raises(BrokerError):
        do_discover(broker, actor=operator)
    row = Broker.objects.get(pk=broker.pk)
    assert (row.reachable, "127.0.0.1:61999" in row.last_error) == (False, True)
    assert not DeadPlace.objects.filter(broker=broker).exists()


def test_every_adapter_call_fails_cleanly_when_unreachable():
    adapter = get_adapter(BrokerConfig(kind="activemq", url=NOBODY, password="s3cret-pw"))
    for call in (adapter.discover, lambda: adapter.peek(PlaceRef("ActiveMQ.DLQ"), 1),
                 lambda: adapter.open_capture(PlaceRef("ActiveMQ.DLQ"), prefetch=1)):
        with pytest.raises(BrokerError) as caught:
            call()
        assert "s3cret-pw" not in caught.value.message
    adapter.close()
    adapter.close()


def test_a_url_that_is_not_stomp_is_refused_for_good():
    with pytest.raises(BrokerError) as caught:
        get_adapter(BrokerConfig(kind="activemq", url="amqp://127.0.0.1:5672"))
    assert caught.value.permanent


def test_closing_twice_is_safe():
    adapter = get_adapter(BrokerConfig(kind="activemq", url=ACTIVEMQ_URL))
    adapter.check()
    adapter.close()
    adapter.close()


def test_a_server_that_never_answers_is_an_error_not_a_hang():
    """A port that accepts connections but never speaks STOMP (a wrong port, a hung broker)."""
    silent = socket.create_server(("127.0.0.1", 0))
    try:
        adapter = get_adapter(BrokerConfig(kind="activemq", url=f"stomp://127.0.0.1:{silent.getsockname()[1]}"))
        with pytest.raises(BrokerError) as caught:
            adapter.check()
        assert "did not send the CONNECTED frame" in caught.value.message
        assert not caught.value.permanent
        adapter.close()
    finally:
        silent.close()
