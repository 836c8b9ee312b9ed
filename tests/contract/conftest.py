"""The contract suite's one fixture: a harness for each adapter kind, on its real server.

Every test in tests/contract/ runs once per kind; each kind carries its server's marker, so
``-m "not nats"`` and the like leave out what a machine cannot run.
"""

from __future__ import annotations

import pytest

from tests.contract.harnesses import HARNESSES

KINDS = [
    pytest.param("memory", id="memory"),
    pytest.param("rabbitmq", id="rabbitmq", marks=pytest.mark.rabbitmq),
    pytest.param("activemq", id="activemq", marks=pytest.mark.activemq),
    pytest.param("nats", id="nats", marks=pytest.mark.nats),
    pytest.param("redis", id="redis", marks=pytest.mark.redis),
]

#: What the contract tests kill: text, text beyond ASCII, and markup that must stay inert.
BODIES = [b'{"order": 1}', "Bestellung \u00fcber 12 \u20ac".encode(), b"<script>alert(1)</script>"]


@pytest.fixture(params=KINDS)
def harness(request, db, operator):
    made = HARNESSES[request.param](operator)
    yield made
    made.cleanup()


@pytest.fixture
def broker(harness):
    return harness.add_broker()


@pytest.fixture
def dead(harness, broker):
    """The harness's dead place holding BODIES, killed by the real failing consumer and
    discovered through the services."""
    from tests.flow import discovered

    harness.kill(BODIES)
    return discovered(broker, harness.operator, harness.place_name, harness.place_scope)
