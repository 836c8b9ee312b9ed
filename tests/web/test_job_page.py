"""A job's page: progress from the Job row, an htmx partial that stops polling once ended, cancel."""

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
    return request_job("mark_failed", actor=operator, reason="won't fix", ids=ids)


def test_the_full_page_shows_the_job_and_polls_while_it_runs(signed_in, job):
    html = signed_in.get(reverse("job", args=[job.pk])).content.decode()
    assert f"<h1>Job {job.pk}: Mark Failed</h1>" in html
    assert "won&#x27;t fix" in html and "olga" in html and "Queued" in html
    assert f'hx-get="/jobs/{job.pk}/" hx-trigger="every 1s"' in html
    assert 'max="3" value="0"' in html and "Cancel job" in html


def test_the_partial_keeps_polling_until_the_job_ends_then_answers_286(signed_in, job):
    running = signed_in.get(reverse("job", args=[job.pk]), **HTMX)
    assert running.status_code == 200
    assert "<html" not in running.content.decode() and 'hx-trigger="every 1s"' in running.content.decode()

    run_job(job.pk)
    ended = signed_in.get(reverse("job", args=[job.pk]), **HTMX)
    html = ended.content.decode()
    assert ended.status_code == 286
    assert "hx-trigger" not in html and 'max="3" value="3"' in html and "3 done" in html and "Succeeded" in html
    assert 'id="job-cancel" hx-swap-oob="true"' in html  # the cancel form goes away too


def test_cancel_stops_a_queued_job_and_is_audited(signed_in, job):
    response = signed_in.post(reverse("job-cancel", args=[job.pk]), {"reason": "wrong letters"}, follow=True)
    job.refresh_from_db()
    assert job.status == "cancelled"
    assert AuditEvent.objects.filter(action="job.cancel", job_id=job.pk, reason="wrong letters").exists()
    assert "Cancel job" not in response.content.decode()


def test_cancelling_an_ended_job_says_so(signed_in, job):
    run_job(job.pk)
    response = signed_in.post(reverse("job-cancel", args=[job.pk]), follow=True)
    assert "has already ended (succeeded)" in response.content.decode()


@pytest.mark.role("admin")  # purging is the admin's
def test_the_jobs_list_shows_newest_first(signed_in, place, operator, job):
    second = request_job("purge", actor=operator, reason="cleanup", filter={"place": place.pk})
    html = signed_in.get(reverse("jobs")).content.decode()
    assert html.index(f'href="/jobs/{second.pk}/"') < html.index(f'href="/jobs/{job.pk}/"')
    assert Job.objects.count() == 2


def test_a_filter_job_says_how_many_letters_arrived_after_it_was_made(signed_in, place, operator):
    store_letter(place, b"order 1")
    job = request_job("replay", actor=operator, reason="fixed", filter={"place": place.pk, "q": "order"})
    store_letter(place, b"order 2")
    html = signed_in.get(reverse("job", args=[job.pk])).content.decode()
    assert "<code>q=order</code>" in html
    assert "1 matching letter arrived since; this job leaves it alone" in html


def test_a_replay_from_the_archive_shows_what_it_selected(signed_in, operator):
    job = Job.objects.create(
        kind="archive_replay", actor=operator, actor_name="olga", reason="last week",
        selection={"lake": "/srv/lake", "since": "2026-11-01", "until": "2026-11-07", "origin": "<b>orders</b>"},
        expected=4, total=4,
    )
    html = signed_in.get(reverse("job", args=[job.pk])).content.decode()
    assert "archived, selected by" in html and "<code>since=2026-11-01</code>" in html
    assert "origin=&lt;b&gt;orders&lt;/b&gt;" in html and "/srv/lake" not in html and "ticked by id" not in html
