"""The demo's two-person rule completes: demo asks for a purge through the pages, the page names
who may approve it, demo-reviewer approves it, and the purge runs (letters purged, audited)."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from console.jobs.door.runner import run_job
from console.models import AuditEvent, DeadLetter, DeadPlace, Job

pytestmark = [pytest.mark.django_db, pytest.mark.approvals]

PASSWORD = "dead-letters-demo"


def _signed_in(username: str) -> Client:
    client = Client()
    assert client.login(username=username, password=PASSWORD)  # the password the demo prints
    return client


def _token(response) -> str:
    return re.search(r'name="token" value="([^"]+)"', response.content.decode()).group(1)


def test_demo_asks_for_a_purge_and_demo_reviewer_approves_it(queued_jobs, django_capture_on_commit_callbacks):
    call_command("demo", "--no-rabbitmq", stdout=StringIO())
    place = DeadPlace.objects.get(name="demo.shipping.dlq")
    letters = list(DeadLetter.objects.filter(place=place).values_list("pk", flat=True))
    assert letters

    demo = _signed_in("demo")
    preview = demo.post(reverse("action-preview", args=[place.pk]), {"action": "purge", "select_all": "1"})
    asked = demo.post(reverse("action-confirm"), {"token": _token(preview), "reason": "demo: clear the shipping DLQ",
                                                  "typed_name": place.name})
    job = Job.objects.get(kind="purge")
    assert asked["Location"] == reverse("job", args=[job.pk]) and job.status == "awaiting_approval"
    own_page = demo.get(asked["Location"]).content.decode()
    assert "Who may approve it: another admin whose scope takes in its places" in own_page
    assert "another admin must approve it" in own_page and ">Approve</button>" not in own_page

    reviewer = _signed_in("demo-reviewer")
    page = reviewer.get(reverse("job", args=[job.pk])).content.decode()
    assert ">Approve</button>" in page and "You may not approve" not in page
    with django_capture_on_commit_callbacks(execute=True):
        approved = reviewer.post(reverse("job-approve", args=[job.pk]), {"reason": "checked"}, follow=True)
    assert f"Job {job.pk} approved" in approved.content.decode() and queued_jobs == [job.pk]

    assert run_job(job.pk) == "succeeded"
    assert set(DeadLetter.objects.filter(pk__in=letters).values_list("state", flat=True)) == {"purged"}
    assert AuditEvent.objects.filter(job_id=job.pk, action="job.approved", actor_name="demo-reviewer").exists()
    assert AuditEvent.objects.filter(job_id=job.pk, action="purge", actor_name="demo").exists()
