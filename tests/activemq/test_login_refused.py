"""A refused login is a permanent error that names the user, never the password, and says so in
the console's own words rather than the server's.

The test broker asks for no credentials (Debian's default configuration), so a tiny STOMP
server on a loopback port answers CONNECT the way ActiveMQ's simple authentication plugin
does: an ERROR frame, then it closes the connection.
"""

from __future__ import annotations

import socket
import threading

import pytest

from console.brokers.base import BrokerConfig, BrokerError
from console.brokers.registry import get_adapter

pytestmark = pytest.mark.activemq

REFUSAL = (b"ERROR\ncontent-type:text/plain\nmessage:User name [olga] or password is invalid.\n\n"
           b"java.lang.SecurityException: User name [olga] or password is invalid.\n\x00")


@pytest.fixture
def refusing_server():
    server = socket.create_server(("127.0.0.1", 0))

    def answer() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(4096)  # the CONNECT frame
            conn.sendall(REFUSAL)

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    yield f"stomp://127.0.0.1:{server.getsockname()[1]}"
    thread.join(timeout=5)
    server.close()


def test_refused_login_is_permanent_and_hides_the_password(refusing_server):
    adapter = get_adapter(BrokerConfig(kind="activemq", url=refusing_server, username="olga",
                                       password="hunter2-secret"))
    with pytest.raises(BrokerError) as caught:
        adapter.check()
    assert caught.value.permanent
    assert "olga" in caught.value.message
    assert "wrong username or password" in caught.value.message
    assert "SecurityException" not in caught.value.message  # its words are not echoed
    assert "hunter2-secret" not in caught.value.message
    adapter.close()
