"""What the broker page tests share: the real RabbitMQ's definition, a port nobody listens on,
and a check that a secret appears nowhere it must not."""

from __future__ import annotations

import json
import socket

import httpx

from console.models import AuditEvent, Broker

RABBIT = {"kind": "rabbitmq", "url": "amqp://127.0.0.1:5672/%2F", "management_url": "http://127.0.0.1:15672",
          "username": "guest", "password": "guest"}
#: A password the tests type; it must never come back in a page or an audit row.
SECRET = "s3cret-never-shown-9f2c"


def rabbit_version() -> str:
    overview = httpx.get("http://127.0.0.1:15672/api/overview", auth=("guest", "guest"), timeout=10)
    return overview.json()["rabbitmq_version"]


def dead_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def assert_secret_kept(secret: str, *responses) -> None:
    """Neither the pages nor the audit nor the stored row (outside its encrypted field) show it."""
    for response in responses:
        assert secret not in response.content.decode()
    audit = json.dumps(list(AuditEvent.objects.values()), default=str)
    assert secret not in audit
    for broker in Broker.objects.all():
        assert secret not in json.dumps([broker.url, broker.management_url, broker.username, broker.options,
                                         broker.last_error, broker.password_encrypted])
