"""discover and capture from the command line, on the in-memory broker: through the services,
audited under the operator's name."""

from __future__ import annotations

import pytest
from django.core.management import CommandError

from console.brokers.memory.adapter import Message
from console.management.cli import find_place, os_user
from console.models import AuditEvent, DeadLetter, DeadPlace, Job

pytestmark = pytest.mark.django_db


def _dead(fake, count: int, origin: str = "orders") -> None:
    fake.queue(origin)
    for i in range(count):
        fake.queue(f"{origin}.dlq").append(
            Message(f"order {i}".encode(), {"x-origin-queue": origin, "x-reason": "rejected"}, {"message_id": f"m{i}"})
        )


def test_discover_prints_each_dead_place_with_its_depth(memory_broker, manage):
    fake, broker = memory_broker
    _dead(fake, 3)
    _dead(fake, 1, origin="invoices")
    printed = manage("discover")
    place = DeadPlace.objects.get(name="orders.dlq")
    assert "mem: 2 dead place(s)" in printed.out
    assert f"[{place.pk}] mem:orders.dlq  depth 3" in printed.out
    assert "mem:invoices.dlq  depth 1" in printed.out
    assert place.discovered_by == "convention" and place.origins == ["orders"]
    event = AuditEvent.objects.get(action="broker.discover")
    assert event.actor_name == f"cli:{os_user()}" and event.count == 2


def test_discover_names_the_broker_that_did_not_answer(memory_broker, manage):
    fake, broker = memory_broker
    fake.down = True
    with pytest.raises(CommandError, match="discovery failed for mem"):
        manage("discover", "mem")


def test_discover_refuses_an_unknown_broker(memory_broker, manage):
    with pytest.raises(CommandError, match="no broker named 'nope'"):
        manage("discover", "nope")


def test_capture_with_wait_takes_the_letters_into_custody(memory_broker, manage, operator):
    fake, broker = memory_broker
    _dead(fake, 3)
    manage("discover")
    printed = manage("capture", "mem:orders.dlq", "--reason", "INC-42 triage", "--wait", "--actor", "olga")
    job = Job.objects.get()
    assert job.status == "succeeded" and job.done == 3
    assert f"job {job.pk} succeeded: 3 captured" in printed.out
    assert sorted(DeadLetter.objects.values_list("body", flat=True)) == [b"order 0", b"order 1", b"order 2"]
    assert len(fake.queue("orders.dlq")) == 0
    requested = AuditEvent.objects.get(action="job.requested")
    assert (requested.actor_name, requested.reason) == ("olga", "INC-42 triage")
    stored = sorted(DeadLetter.objects.values_list("id", flat=True))
    assert AuditEvent.objects.get(action="capture").letter_ids == stored


def test_capture_without_wait_queues_the_job_for_the_worker(memory_broker, manage):
    fake, broker = memory_broker
    _dead(fake, 2)
    manage("discover")
    place = DeadPlace.objects.get()
    printed = manage("capture", str(place.pk), "--reason", "later", "--limit", "1")
    job = Job.objects.get()
    assert (job.status, job.kind, job.params) == ("queued", "capture", {"limit": 1})
    assert f"job {job.pk} queued" in printed.out
    assert not DeadLetter.objects.exists() and len(fake.queue("orders.dlq")) == 2


def test_capture_needs_a_reason_and_a_known_place(memory_broker, manage):
    fake, broker = memory_broker
    _dead(fake, 1)
    manage("discover")
    with pytest.raises(CommandError, match="reason is required"):
        manage("capture", "mem:orders.dlq", "--reason", "  ")
    with pytest.raises(CommandError, match="no dead place 'mem:nothing.dlq'"):
        manage("capture", "mem:nothing.dlq", "--reason", "x")
    with pytest.raises(CommandError, match="broker:queue"):
        manage("capture", "orders.dlq", "--reason", "x")
    assert not Job.objects.exists()


def test_a_place_is_named_by_id_by_queue_or_by_vhost_and_queue(memory_broker):
    fake, broker = memory_broker
    default = DeadPlace.objects.create(broker=broker, name="orders.dlq", scope="/")
    other = DeadPlace.objects.create(broker=broker, name="orders.dlq", scope="eu")
    assert find_place(str(other.pk)) == other
    assert find_place("mem:/orders.dlq") == default
    assert find_place("mem://orders.dlq") == default  # as the place prints itself
    assert find_place("mem:eu/orders.dlq") == other
    with pytest.raises(CommandError, match="names several places"):
        find_place("mem:orders.dlq")
