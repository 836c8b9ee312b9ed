"""An unreachable Redis and refused credentials give a clear error and change nothing."""

from __future__ import annotations

import uuid

import pytest

from console.brokers import BrokerError
from console.models import Broker, DeadPlace
from console.services.brokers import check_broker, do_add_broker, do_discover
from tests.redis_streams.conftest import REDIS_URL, TEST_OPTIONS
from tests.redis_streams.flow import capture, discovered

pytestmark = [pytest.mark.redis, pytest.mark.django_db]


@pytest.fixture
def acl_user(redis_client):
    """A Redis ACL user with a known password, deleted afterwards."""
    name = f"dlo-test-{uuid.uuid4().hex[:8]}"
    redis_client.acl_setuser(name, enabled=True, passwords=["+right-password"], keys=["*"], commands=["+@all"])
    yield name
    redis_client.acl_deluser(name)


def test_an_unreachable_server_is_a_temporary_error_that_names_it(operator):
    broker = do_add_broker(actor=operator, name="nowhere", kind="redis", url="redis://127.0.0.1:6999/0")
    with pytest.raises(BrokerError) as raised:
        check_broker(broker)
    assert not raised.value.permanent
    assert "cannot reach Redis at 127.0.0.1:6999" in raised.value.message
    with pytest.raises(BrokerError):
        do_discover(broker, actor=operator)
    broker.refresh_from_db()
    assert not broker.reachable and "127.0.0.1:6999" in broker.last_error
    assert not DeadPlace.objects.exists()


def test_a_wrong_password_is_a_permanent_error_without_the_password(acl_user, operator):
    broker = do_add_broker(actor=operator, name="wrong", kind="redis", url=REDIS_URL,
                           username=acl_user, password="wrong-password-xyz")
    with pytest.raises(BrokerError) as raised:
        check_broker(broker)
    assert raised.value.permanent
    assert "refused the login" in raised.value.message
    assert "wrong-password-xyz" not in raised.value.message
    assert not DeadPlace.objects.exists()
    assert "wrong-password-xyz" not in Broker.objects.get(pk=broker.pk).last_error

    right = do_add_broker(actor=operator, name="right", kind="redis", url=f"redis://{acl_user}:right-password@127.0.0.1:6379/0")
    assert check_broker(right)["version"].startswith(("6.", "7.", "8."))


def test_a_capture_with_refused_credentials_fails_and_leaves_the_entries_pending(
    redis_client, poisoned, redis_broker, acl_user, operator
):
    redis_client.xadd(poisoned.stream, {"body": "m"})
    poisoned.fail(times=4)
    place = discovered(redis_broker, operator, poisoned.group, scope=poisoned.stream)
    before = poisoned.deliveries()
    Broker.objects.filter(pk=redis_broker.pk).update(username=acl_user)
    broker = Broker.objects.get(pk=redis_broker.pk)
    broker.password = "wrong-password-xyz"
    broker.save()

    job = capture(place, operator)
    assert job.status == "failed" and "refused the login" in job.error
    assert poisoned.deliveries() == before
    with pytest.raises(BrokerError):
        do_discover(broker, actor=operator)
    assert DeadPlace.objects.get(pk=place.pk).depth == 1


def test_a_capture_while_redis_is_unreachable_fails_after_its_wait(operator, settings):
    settings.DLO_BROKER_WAIT_SECONDS = 0
    broker = do_add_broker(actor=operator, name="nowhere", kind="redis", url="redis://127.0.0.1:6999/0",
                           options=dict(TEST_OPTIONS))
    place = DeadPlace.objects.create(broker=broker, name="billing", scope="orders", kind="pending")
    job = capture(place, operator)
    assert job.status == "failed" and "cannot reach Redis" in job.error


def test_something_else_answering_is_named_without_quoting_it(operator):
    """Whatever answers at the URL (here a web server) is not quoted back into the console."""
    import socket
    import threading

    server = socket.create_server(("127.0.0.1", 0))

    def answer() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(4096)
            conn.sendall(b"HTTP/1.1 400 Bad Request\r\n\r\n<b>remote-text-91d2</b>")

    threading.Thread(target=answer, daemon=True).start()
    broker = do_add_broker(actor=operator, name="web", kind="redis",
                           url=f"redis://127.0.0.1:{server.getsockname()[1]}/0")
    with pytest.raises(BrokerError) as raised:
        check_broker(broker)
    server.close()
    assert "did not answer as a Redis server does" in raised.value.message
    assert "remote-text-91d2" not in raised.value.message
