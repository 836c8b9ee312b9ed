"""Pause, resume and cancel on a job's page: only the buttons that apply, each audited."""

from __future__ import annotations

import pytest
from django.urls import reverse

from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import AuditEvent, Job
from tests.web.factory import store_letter

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def job(place, operator):
    ids = [store_letter(place, f"order {i}".encode()).pk for i in range(3)]
    return request_job("replay", actor=operator, reason="fixed", ids=ids)


def _buttons(html: str) -> list[str]:
    return [name for name in ("Pause", "Resume", "Cancel job") if f">{name}</button>" in html]


def test_a_queued_job_can_be_paused_then_resumed(signed_in, job, queued_jobs, django_capture_on_commit_callbacks):
    page = signed_in.get(reverse("job", args=[job.pk])).content.decode()
    assert _buttons(page) == ["Pause", "Cancel job"]

    paused = signed_in.post(reverse("job-pause", args=[job.pk]), {"reason": "broker maintenance"}, follow=True)
    job.refresh_from_db()
    assert job.status == "paused"
    assert _buttons(paused.content.decode()) == ["Resume", "Cancel job"]
    assert AuditEvent.objects.filter(action="job.pause", job_id=job.pk, reason="broker maintenance").exists()
    assert run_job(job.pk) == "not runnable"  # a paused job waits

    with django_capture_on_commit_callbacks(execute=True):
        resumed = signed_in.post(reverse("job-resume", args=[job.pk]), follow=True)
    job.refresh_from_db()
    assert job.status == "queued" and queued_jobs == [job.pk]  # handed to Celery again
    assert "resumed" in resumed.content.decode()
    assert run_job(job.pk) == "succeeded"
    ended = signed_in.get(reverse("job", args=[job.pk])).content.decode()
    assert _buttons(ended) == [] and "3 done" in ended and "0 returned after replay" in ended


def test_the_polled_part_swaps_the_buttons_only_when_they_change(signed_in, job):
    same = signed_in.get(reverse("job", args=[job.pk]), {"shown": "pause,cancel"}, **HTMX).content.decode()
    assert 'id="job-buttons"' not in same
    Job.objects.filter(pk=job.pk).update(status="paused")
    changed = signed_in.get(reverse("job", args=[job.pk]), {"shown": "pause,cancel"}, **HTMX).content.decode()
    assert 'id="job-buttons" class="buttons" hx-swap-oob="true"' in changed
    assert _buttons(changed) == ["Resume", "Cancel job"] and 'hx-trigger="every 5s"' in changed


def test_a_job_asked_to_pause_offers_only_cancel(signed_in, job):
    Job.objects.filter(pk=job.pk).update(status="running", pause_requested=True)
    html = signed_in.get(reverse("job", args=[job.pk])).content.decode()
    assert _buttons(html) == ["Cancel job"] and "Pause requested" in html


def test_pausing_an_ended_job_says_why_not(signed_in, job):
    run_job(job.pk)
    response = signed_in.post(reverse("job-pause", args=[job.pk]), follow=True)
    assert "is succeeded: it cannot be paused" in response.content.decode()


def test_the_jobs_list_filters_by_status(signed_in, job, place, operator):
    other = request_job("mark_failed", actor=operator, reason="x", filter={"place": place.pk})
    run_job(other.pk)
    succeeded = signed_in.get(reverse("jobs"), {"status": "succeeded"}).content.decode()
    assert f'href="/jobs/{other.pk}/"' in succeeded and f'href="/jobs/{job.pk}/"' not in succeeded
    active = signed_in.get(reverse("jobs"), {"status": "active"}).content.decode()
    assert f'href="/jobs/{job.pk}/"' in active and f'href="/jobs/{other.pk}/"' not in active
