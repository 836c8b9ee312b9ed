"""Scheduled discovery (Celery beat's console.discover_brokers) on the real RabbitMQ: a dead
queue declared after the broker was added appears without a click, audited as
``system:discovery``; a round that changes nothing writes no audit row; a deleted queue is
marked gone, its letters kept."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from console.jobs.automation.periodic import DISCOVERY_ACTOR, discover_brokers
from console.models import AuditEvent, DeadPlace
from tests.web.factory import store_letter

pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db]


def _to_queue(name: str) -> dict:
    return {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": name}


def test_a_queue_declared_later_appears_and_one_deleted_is_marked_gone(kit, rabbit_broker):
    assert isinstance(discover_brokers()[rabbit_broker.name], int)
    dlq = kit.queue(kit.name("later.dlq"))
    kit.queue(kit.name("later"), _to_queue(dlq))
    assert not DeadPlace.objects.filter(broker=rabbit_broker, name=dlq).exists()

    discover_brokers()
    place = DeadPlace.objects.get(broker=rabbit_broker, name=dlq)
    appeared = AuditEvent.objects.get(action="place.appeared", place_name=dlq)
    assert (appeared.actor_name, appeared.broker_name, place.gone) == (DISCOVERY_ACTOR, rabbit_broker.name, False)

    # Nothing of this test's changed on the broker meanwhile. The broker is shared: other tests'
    # queues come and go in the same vhost (the suite runs in parallel), and are audited.
    ours = AuditEvent.objects.filter(place_name__contains=kit.suffix)
    before = ours.count()
    discover_brokers()
    assert ours.count() == before

    letter = store_letter(place, b'{"order": 1}', origin=kit.name("later"))
    kit.http.delete(f"/api/queues/%2F/{quote(dlq, safe='')}").raise_for_status()
    discover_brokers()
    place.refresh_from_db()
    assert place.gone
    assert AuditEvent.objects.filter(action="place.gone", place_name=dlq, actor_name=DISCOVERY_ACTOR).exists()
    assert place.letters.get().pk == letter.pk  # kept with its letters


def test_an_unreachable_broker_is_reported_and_the_others_are_still_discovered(kit, rabbit_broker):
    from console.services.brokers import do_add_broker

    do_add_broker(actor="tests", name="nowhere", kind="rabbitmq", url="amqp://guest:guest@127.0.0.1:1/%2F",
                  management_url="http://127.0.0.1:1/")
    results = discover_brokers()
    assert isinstance(results[rabbit_broker.name], int) and isinstance(results["nowhere"], str)
