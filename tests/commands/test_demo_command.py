"""manage.py demo: the demo account and demo letters, on a real RabbitMQ or without one;
running it twice adds nothing."""

from __future__ import annotations

import gzip
import json
import uuid

import httpx
import pytest
from django.contrib.auth import authenticate

from console.access.roles import role_of
from console.letters.values import from_json
from console.management.demo import rabbitmq
from console.management.demo.catalogue import HOSTILE_NOTE
from console.models import Broker, DeadLetter, Job
from console.services.audit import verify_chain

pytestmark = pytest.mark.django_db

MANAGEMENT = "http://127.0.0.1:15672"
GUEST = ("guest", "guest")


def _letters_by_message_id():
    return {letter.message_id: letter for letter in DeadLetter.objects.all()}


def _check_demo_letters() -> None:
    letters = _letters_by_message_id()
    assert len(letters) == 12
    by_origin = sorted((letter.origin_queue, letter.message_id) for letter in letters.values())
    assert [o for o, _ in by_origin].count("demo.billing") == 8
    assert [o for o, _ in by_origin].count("demo.shipping") == 4
    assert {letter.reason for letter in letters.values()} == {"rejected"}
    assert {letter.origin_address for letter in letters.values()} == {"demo.orders"}
    hostile = letters["ORD-1007"]
    assert from_json(hostile.headers)["x-customer-note"] == HOSTILE_NOTE
    assert b"<img src=x onerror=alert(1)>" in hostile.body_bytes
    binary = letters["ORD-1006"]
    assert json.loads(gzip.decompress(binary.body_bytes))["order_id"] == "ORD-1006"
    declined = letters["ORD-1009"]
    assert declined.exception_type == "com.shop.billing.PaymentDeclinedException"
    assert declined.fingerprint == letters["ORD-1011"].fingerprint  # same failure, other card
    demo = authenticate(username="demo", password="dead-letters-demo")
    reviewer = authenticate(username="demo-reviewer", password="dead-letters-demo")
    assert role_of(demo) == "admin" and role_of(reviewer) == "admin"  # only an admin approves a purge
    assert verify_chain().ok


def test_without_rabbitmq_the_letters_are_kept_by_a_memory_broker(manage):
    printed = manage("demo", "--no-rabbitmq")
    _check_demo_letters()
    assert Broker.objects.get().kind == "memory"
    assert "replay needs a real broker" in printed.out
    assert "sign in as demo / dead-letters-demo" in printed.out

    manage("demo", "--no-rabbitmq")
    assert DeadLetter.objects.count() == 12 and Broker.objects.count() == 1


@pytest.fixture
def vhost():
    """A vhost of its own on the real RabbitMQ, so the demo's queues meet no one else's."""
    name = f"dlo-demo-{uuid.uuid4().hex[:8]}"
    httpx.put(f"{MANAGEMENT}/api/vhosts/{name}", auth=GUEST).raise_for_status()
    httpx.put(f"{MANAGEMENT}/api/permissions/{name}/guest", auth=GUEST,
              json={"configure": ".*", "write": ".*", "read": ".*"}).raise_for_status()
    yield name
    httpx.delete(f"{MANAGEMENT}/api/vhosts/{name}", auth=GUEST)


def test_on_rabbitmq_the_letters_die_for_real_and_are_captured(manage, vhost):
    url = f"amqp://guest:guest@127.0.0.1:5672/{vhost}"
    printed = manage("demo", "--rabbitmq-url", url, "--management-url", "http://guest:guest@127.0.0.1:15672/")
    assert "rejected 12 of them, so 12 letters now wait in the DLQs" in printed.out
    _check_demo_letters()
    broker = Broker.objects.get(name="local-rabbit")
    assert (broker.kind, broker.url, broker.password) == ("rabbitmq", f"amqp://127.0.0.1:5672/{vhost}", "guest")
    letter = _letters_by_message_id()["ORD-1002"]
    (death,) = from_json(letter.headers)["x-death"]
    assert (death["queue"], death["reason"], death["count"]) == ("demo.billing", "rejected", 1)
    assert letter.place.scope == vhost and letter.place.name == "demo.billing.dlq"
    assert rabbitmq.dead_letter_depths(url) == {"demo.billing.dlq": 0, "demo.shipping.dlq": 0}

    jobs = Job.objects.count()
    manage("demo", "--rabbitmq-url", url)
    assert DeadLetter.objects.count() == 12 and Job.objects.count() == jobs
    assert rabbitmq.dead_letter_depths(url) == {"demo.billing.dlq": 0, "demo.shipping.dlq": 0}
