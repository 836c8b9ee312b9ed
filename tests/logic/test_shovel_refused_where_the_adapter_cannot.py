"""A broker that cannot move a whole queue by itself is never asked to: the service, the API
and the page refuse, and the adapter's own primitives say so with a permanent error."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from console.brokers import BrokerError, PlaceRef
from console.brokers.memory.adapter import Message
from console.jobs.door.requests import request_job
from console.models import AuditEvent, Job
from console.services.brokers import do_discover
from console.services.jobs import JobError

pytestmark = pytest.mark.django_db


@pytest.fixture
def place(memory_broker, operator):
    fake, broker = memory_broker
    fake.queue("orders")
    fake.queue("orders.manual")
    fake.queue("orders.dlq").append(Message(b"1", {"x-origin-queue": "orders"}))
    (found,) = do_discover(broker, actor=operator)
    return found


def test_the_memory_broker_cannot_shovel_and_nothing_asks_it_to(place, operator, client):
    with pytest.raises(JobError, match="cannot move a whole queue on the broker"):
        request_job("shovel", place=place, target="orders.manual", actor=operator, reason="move")

    with place.broker.adapter() as adapter:
        assert adapter.can_move_server_side is False
        with pytest.raises(BrokerError, match="cannot move a whole place") as refused:
            adapter.start_server_move(PlaceRef("orders.dlq"), "orders.manual", name="x", count=1)
        assert refused.value.permanent

    api = APIClient()
    api.force_authenticate(operator)
    answer = api.post(f"/api/places/{place.pk}/shovel/", {"target": "orders.manual", "reason": "r"}, format="json")
    assert answer.status_code == 400 and "cannot move a whole queue" in answer.json()["detail"]

    client.force_login(operator)
    page = client.get(reverse("place", args=[place.pk])).content.decode()
    assert "Move the whole queue on the broker" not in page
    posted = client.post(reverse("place-shovel", args=[place.pk]), {"target": "orders.manual", "reason": "r"},
                         follow=True)
    assert "cannot move a whole queue on the broker" in posted.content.decode()

    assert not Job.objects.filter(kind="shovel").exists()
    assert not AuditEvent.objects.filter(action="job.requested").exists()
