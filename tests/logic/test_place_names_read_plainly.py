"""How a place is named in job summaries, audit rows and logs: broker, scope, name."""

from __future__ import annotations

from console.models import Broker, DeadPlace


def named(scope: str) -> str:
    return str(DeadPlace(broker=Broker(name="prod"), scope=scope, name="orders.dlq"))


def test_the_default_vhost_goes_unsaid_and_others_are_shown():
    assert named("/") == "prod:orders.dlq"
    assert named("") == "prod:orders.dlq"
    assert named("billing") == "prod:billing/orders.dlq"
