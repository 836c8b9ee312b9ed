"""The inventory shows brokers and dead places; Discover and Capture go through the services."""

from __future__ import annotations

import pytest
from django.urls import reverse

from console.brokers.memory.adapter import Message
from console.models import AuditEvent, Job
from tests.web.factory import store_letter

pytestmark = pytest.mark.django_db


def test_inventory_lists_broker_health_and_places_with_held_letters(signed_in, place, memory_broker):
    store_letter(place)
    store_letter(place)
    html = signed_in.get(reverse("inventory")).content.decode()
    assert "mem" in html and "memory" in html  # broker name and its version after discovery
    assert f'href="/places/{place.pk}/"' in html and "orders.dlq" in html
    assert '<td class="num">2</td>' in html  # held in custody
    assert "<td>convention</td>" in html  # how it was found


def test_discover_finds_new_places_and_is_audited(signed_in, place, memory_broker):
    fake, broker = memory_broker
    fake.queue("payments.dlq").append(Message(b"x"))
    response = signed_in.post(reverse("broker-discover", args=[broker.pk]), follow=True)
    html = response.content.decode()
    assert "found 2 dead places" in html and "payments.dlq" in html
    assert AuditEvent.objects.filter(action="broker.discover", actor_name="olga").exists()


def test_an_unreachable_broker_shows_a_message_not_an_error_page(signed_in, place, memory_broker):
    fake, broker = memory_broker
    fake.down = True
    response = signed_in.post(reverse("broker-discover", args=[broker.pk]), follow=True)
    assert response.status_code == 200
    assert "Discovery on mem failed: memory broker is down" in response.content.decode()
    assert "Last error: memory broker is down" in response.content.decode()


def test_capture_makes_a_job_with_the_reason_and_opens_its_page(signed_in, place, queued_jobs):
    response = signed_in.post(reverse("place-capture", args=[place.pk]), {"reason": "triage INC-7"})
    job = Job.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("job", args=[job.pk])
    assert (job.kind, job.reason, job.actor_name) == ("capture", "triage INC-7", "olga")
    assert AuditEvent.objects.filter(action="job.requested", job_id=job.pk, reason="triage INC-7").exists()


def test_capture_without_a_reason_is_refused(signed_in, place):
    response = signed_in.post(reverse("place-capture", args=[place.pk]), {"reason": "  "}, follow=True)
    assert "a reason is required" in response.content.decode()
    assert not Job.objects.exists()
