"""Scheduled discovery writes audit rows only for what changed (a place appeared, went, or came
back), while a person's discovery is always audited: the audit does not fill with rounds every
few minutes that found nothing new."""

from __future__ import annotations

import pytest

from console.jobs.automation.periodic import DISCOVERY_ACTOR, discover_brokers
from console.models import AuditEvent, DeadPlace
from console.services.brokers import do_discover

pytestmark = pytest.mark.django_db


def _actions() -> list[tuple[str, str, str]]:
    return list(AuditEvent.objects.filter(actor_name=DISCOVERY_ACTOR).order_by("id")
                .values_list("action", "place_name", "outcome"))


def test_places_that_appear_go_and_come_back_are_each_audited_once(memory_broker):
    fake, broker = memory_broker
    fake.queue("orders")
    fake.queue("orders.dlq")
    discover_brokers()
    assert [a for a, *_ in _actions()] == ["place.appeared", "broker.discover"]
    discover_brokers()
    assert len(_actions()) == 2  # nothing changed: nothing written

    del fake.queues["orders.dlq"]
    discover_brokers()
    assert DeadPlace.objects.get(name="orders.dlq").gone
    assert [a for a, *_ in _actions()][2:] == ["place.gone", "broker.discover"]

    fake.queue("orders.dlq")
    discover_brokers()
    assert not DeadPlace.objects.get(name="orders.dlq").gone
    assert [a for a, *_ in _actions()][4:] == ["place.appeared", "broker.discover"]


def test_a_persons_discovery_is_audited_even_when_nothing_changed(memory_broker, operator):
    fake, broker = memory_broker
    fake.queue("orders.dlq")
    do_discover(broker, actor=operator)
    do_discover(broker, actor=operator)
    assert AuditEvent.objects.filter(action="broker.discover", actor_name="olga").count() == 2
