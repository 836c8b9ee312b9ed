"""Fixtures for the tests against the real RabbitMQ (127.0.0.1:5672, management on 15672)."""

from __future__ import annotations

import pytest

from console.brokers.base import BrokerConfig
from console.brokers.rabbitmq.adapter import RabbitMQAdapter
from tests.rabbitmq.kit import AMQP_URL, MANAGEMENT_URL, PASSWORD, USER, RabbitKit


def rabbit_config(**changes) -> BrokerConfig:
    values = dict(kind="rabbitmq", url=AMQP_URL, management_url=MANAGEMENT_URL, username=USER, password=PASSWORD)
    values.update(changes)
    return BrokerConfig(**values)


@pytest.fixture
def kit():
    """Declares this test's queues, exchanges and policies, and deletes them afterwards."""
    helper = RabbitKit()
    yield helper
    helper.close()


@pytest.fixture
def adapter():
    with RabbitMQAdapter(rabbit_config()) as rabbit:
        yield rabbit


@pytest.fixture
def rabbit_broker(kit):
    """A Broker row for the local RabbitMQ, added through the service (credentials in the URL,
    as an operator would paste them)."""
    from console.services.brokers import do_add_broker

    return do_add_broker(
        actor="tests", name=f"rabbit-{kit.suffix}", kind="rabbitmq",
        url=f"amqp://{USER}:{PASSWORD}@127.0.0.1:5672/%2F", management_url=MANAGEMENT_URL,
    )
