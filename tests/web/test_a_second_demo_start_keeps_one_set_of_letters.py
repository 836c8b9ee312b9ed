"""Issue 46: a second ``make run`` with RabbitMQ present. The first start found no RabbitMQ and
kept the demo letters on the memory broker; the second finds one: the memory broker goes with its
copy (audited), no "gone" place is left behind, and the demo says twelve letters, as the README
does."""

from __future__ import annotations

import uuid
from io import StringIO

import httpx
import pytest
from django.core.management import call_command
from django.urls import reverse

from console.models import AuditEvent, Broker, DeadLetter, DeadPlace

pytestmark = pytest.mark.django_db

MANAGEMENT = "http://127.0.0.1:15672"
GUEST = ("guest", "guest")


@pytest.fixture
def vhost():
    """A vhost of the real RabbitMQ and a user who sees only it (no other test's queues)."""
    name = f"dlo-demo-{uuid.uuid4().hex[:8]}"
    httpx.put(f"{MANAGEMENT}/api/vhosts/{name}", auth=GUEST).raise_for_status()
    httpx.put(f"{MANAGEMENT}/api/users/{name}", auth=GUEST, json={"password": name, "tags": "management"}
              ).raise_for_status()
    httpx.put(f"{MANAGEMENT}/api/permissions/{name}/{name}", auth=GUEST,
              json={"configure": ".*", "write": ".*", "read": ".*"}).raise_for_status()
    yield name
    httpx.delete(f"{MANAGEMENT}/api/vhosts/{name}", auth=GUEST)
    httpx.delete(f"{MANAGEMENT}/api/users/{name}", auth=GUEST)


def test_the_second_start_on_rabbitmq_keeps_one_set_of_demo_letters(vhost, client):
    first = StringIO()
    call_command("demo", "--no-rabbitmq", stdout=first)
    assert "demo letters in custody: 12" in first.getvalue(), first.getvalue()
    assert Broker.objects.filter(name="demo", kind="memory").exists()

    second = StringIO()
    call_command("demo", "--rabbitmq-url", f"amqp://{vhost}:{vhost}@127.0.0.1:5672/{vhost}",
                 "--management-url", f"http://{vhost}:{vhost}@127.0.0.1:15672/", stdout=second)
    said = second.getvalue()
    assert "the memory broker 'demo' of an earlier start went, with its copy of the demo letters (12)" in said, said
    assert "demo letters in custody: 12" in said, said
    assert not Broker.objects.filter(name="demo").exists()
    assert not DeadPlace.objects.filter(gone=True).exists()
    assert DeadLetter.objects.count() == 12 and set(DeadLetter.objects.values_list("broker__kind", flat=True)) == {
        "rabbitmq"}
    (retired,) = AuditEvent.objects.filter(action="demo.retired")
    assert (retired.broker_name, retired.count) == ("demo", 12)

    assert client.login(username="demo", password="dead-letters-demo")
    inventory = client.get(reverse("inventory")).content.decode()
    assert "gone" not in inventory.split("<main>", 1)[1]
