"""Fixtures for the ActiveMQ Classic adapter's tests: the real broker's STOMP connector.

Queue names carry a fresh suffix per test. Queues named ``indiv.*`` die into their own
``DLQ.indiv.*`` (scripts/activemq/activemq.xml); others into the shared ``ActiveMQ.DLQ``,
which other tests use too: each test tags its messages (``kit.TAG``) and drains only its own
letters from it afterwards, and looks only at letters from its own origins. Failing consumers:
a STOMP NACK (``nacked``, ``Client.fail_all``), and a JMS consumer over OpenWire whose
listener throws (``kit.fail_with_jms``, which needs Java and Debian's ActiveMQ jars).
"""

from __future__ import annotations

import os
import uuid

import pytest

from console.brokers.activemq.places import SHARED_DLQ
from tests.activemq.kit import Client

ACTIVEMQ_URL = os.environ.get("DLO_TEST_ACTIVEMQ_URL", "stomp://127.0.0.1:61613")


class Names:
    """Queue names for one test; every name handed out is drained afterwards."""

    def __init__(self) -> None:
        self.suffix = uuid.uuid4().hex[:10]
        self.made: list[str] = []

    def __call__(self, base: str) -> str:
        name = f"{base}.{self.suffix}"
        self.made.append(name)
        return name

    def individual(self, base: str) -> tuple[str, str]:
        """A queue with its own DLQ: (queue, its DLQ)."""
        queue = self(f"indiv.{base}")
        dlq = f"DLQ.{queue}"
        self.made.append(dlq)
        return queue, dlq


@pytest.fixture
def names():
    return Names()


@pytest.fixture
def amq(names):
    """A STOMP client for the test (producer, failing consumer, origin consumer)."""
    client = Client(ACTIVEMQ_URL, names.suffix)
    yield client
    for queue in [*names.made, SHARED_DLQ]:
        client.drain_mine(queue)
    client.close()


@pytest.fixture
def nacked(amq, names):
    """Makes letters the way a failing consumer does: sends ``bodies`` to a fresh ``indiv.*``
    queue and NACKs each; returns (queue, its DLQ) once the DLQ holds them all."""

    def make(bodies: list[bytes], base: str = "orders") -> tuple[str, str]:
        queue, dlq = names.individual(base)
        for body in bodies:
            amq.send(queue, body)
        amq.fail_all(queue, len(bodies))
        assert len(amq.wait_for(dlq, len(bodies))) == len(bodies)
        return queue, dlq

    return make


@pytest.fixture
def make_broker(db, operator):
    """Adds the Broker row for the real ActiveMQ through the service, with the given options."""
    from console.services.brokers import do_add_broker

    def make(name: str = "activemq", url: str = ACTIVEMQ_URL, **options):
        return do_add_broker(actor=operator, name=name, kind="activemq", url=url, options=options)

    return make
