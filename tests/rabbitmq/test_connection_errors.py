"""Wrong credentials and unreachable ports give a clear BrokerError at once (permanent or not),
naming the broker but never the password, and change nothing; a broker that drops the
connection mid-capture gives a temporary error and loses nothing."""

from __future__ import annotations

import pytest

from console.brokers.base import BrokerError, Outgoing, PlaceRef
from console.brokers.rabbitmq.adapter import RabbitMQAdapter
from console.models import Broker, DeadPlace
from console.services.brokers import check_broker, do_add_broker, do_discover
from tests.rabbitmq.conftest import rabbit_config
from tests.rabbitmq.kit import CuttingProxy

pytestmark = pytest.mark.rabbitmq

SECRET = "not-the-guest-password"


def error_of(config, action) -> BrokerError:
    with RabbitMQAdapter(config) as adapter:
        with pytest.raises(BrokerError) as caught:
            action(adapter)
    return caught.value


def test_check_reports_the_version_and_close_is_final_and_safe_twice(kit):
    adapter = RabbitMQAdapter(rabbit_config())
    facts = adapter.check()
    assert facts["version"] == kit.http.get("/api/overview").json()["rabbitmq_version"]
    assert facts["vhost"] == "/"
    adapter.close()
    adapter.close()
    with pytest.raises(BrokerError, match="closed"):
        adapter.check()


def test_wrong_credentials_are_permanent_for_amqp_and_for_the_management_api():
    amqp = error_of(rabbit_config(password=SECRET), lambda a: a.check())
    assert amqp.permanent
    assert "amqp://127.0.0.1:5672" in amqp.message and "wrong username or password" in amqp.message
    http = error_of(rabbit_config(password=SECRET), lambda a: a.discover())
    assert http.permanent
    assert "http://127.0.0.1:15672" in http.message and "wrong username or password" in http.message
    assert SECRET not in amqp.message + http.message


def test_unreachable_ports_are_temporary_for_amqp_and_for_the_management_api():
    amqp = error_of(rabbit_config(url="amqp://127.0.0.1:5999/%2F"), lambda a: a.check())
    assert not amqp.permanent and "cannot reach RabbitMQ at amqp://127.0.0.1:5999" in amqp.message
    http = error_of(rabbit_config(management_url="http://127.0.0.1:5999"), lambda a: a.discover())
    assert not http.permanent and "cannot reach the RabbitMQ management API at http://127.0.0.1:5999" in http.message


def test_an_unknown_vhost_is_permanent():
    error = error_of(rabbit_config(url="amqp://127.0.0.1:5672/no-such-vhost"), lambda a: a.check())
    assert error.permanent and "no-such-vhost" in error.message


@pytest.mark.django_db
def test_a_broker_with_wrong_credentials_changes_nothing_but_its_health(operator):
    broker = do_add_broker(actor=operator, name="rabbit-wrong", kind="rabbitmq",
                           url=f"amqp://guest:{SECRET}@127.0.0.1:5672/%2F", management_url="http://127.0.0.1:15672")
    with pytest.raises(BrokerError):
        check_broker(broker)
    with pytest.raises(BrokerError) as caught:
        do_discover(broker, actor=operator)
    assert caught.value.permanent
    assert not DeadPlace.objects.filter(broker=broker).exists()
    broker = Broker.objects.get(pk=broker.pk)
    assert broker.reachable is False and "wrong username or password" in broker.last_error
    assert SECRET not in broker.last_error


def test_a_connection_dropped_mid_capture_is_temporary_and_loses_nothing(kit, adapter):
    dlq = kit.queue(kit.name("fragile") + ".dlq")
    for i in range(4):
        kit.publish(dlq, f"m{i}".encode())
    session = adapter.open_capture(PlaceRef(dlq, "/"), prefetch=2)
    assert len(session.next_batch(2, wait_seconds=2.0)) == 2

    kit.kill_connection(adapter.connection_name)
    with pytest.raises(BrokerError) as caught:
        session.next_batch(2, wait_seconds=5.0)
    assert not caught.value.permanent
    session.close()

    kit.wait_depth(dlq, 4)  # the unacked two went back
    with adapter.open_capture(PlaceRef(dlq, "/"), prefetch=10) as again:  # a new connection
        assert sorted(m.body for m in again.next_batch(10, wait_seconds=1.0)) == [b"m0", b"m1", b"m2", b"m3"]


def test_a_connection_dropped_mid_publish_is_temporary_and_a_retry_delivers_everything(kit):
    target = kit.queue(kit.name("bulk"))
    chunk = b"x" * (64 * 1024)
    outgoing = [Outgoing(i, target, chunk, {"n": i}, {}) for i in range(100)]  # 6.4 MiB, one window
    proxy = CuttingProxy(kit, cut_after=3 * 1024 * 1024)  # the broker vanishes half way through
    try:
        with RabbitMQAdapter(rabbit_config(url=f"amqp://127.0.0.1:{proxy.port}/%2F")) as adapter:
            with pytest.raises(BrokerError) as caught:
                adapter.publish(outgoing, window=100)
            assert not caught.value.permanent and proxy.cuts == 1

            # The caller retries the whole batch: some messages arrive twice, none is missing.
            assert all(result.ok for result in adapter.publish(outgoing, window=100))
    finally:
        proxy.close()
    arrived = [m.headers["n"] for m in kit.drain(target)]
    assert set(arrived) == set(range(100)) and 100 <= len(arrived) < 200
