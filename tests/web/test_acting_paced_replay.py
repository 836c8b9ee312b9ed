"""A replay's pace from the preview page: rate limit, connections, canary and threshold are asked
for under the confirm (not for a mark-failed), kept on the job, shown on its page, and a job that
paused itself says why."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from console.models import Job
from tests.web.factory import store_letter

pytestmark = pytest.mark.django_db


@pytest.fixture
def letters(place):
    return [store_letter(place, f"order {i}".encode(), origin="orders") for i in range(4)]


def _preview(client, place, action):
    return client.post(reverse("action-preview", args=[place.pk]), {"action": action, "select_all": "1"})


def _token(response) -> str:
    return re.search(r'name="token" value="([^"]+)"', response.content.decode()).group(1)


def test_the_confirm_of_a_replay_asks_for_its_pace_and_a_mark_failed_does_not(signed_in, place, letters):
    replay = _preview(signed_in, place, "replay").content.decode()
    for field in ("rate_limit", "concurrency", "canary_size", "canary_wait_seconds", "return_threshold"):
        assert f'name="{field}"' in replay
    mark_failed = _preview(signed_in, place, "mark_failed").content.decode()
    assert 'name="canary_size"' not in mark_failed and 'name="rate_limit"' not in mark_failed


def test_a_paced_replay_keeps_its_pace_and_its_page_shows_it(signed_in, place, letters):
    preview = _preview(signed_in, place, "replay")
    response = signed_in.post(reverse("action-confirm"), {
        "token": _token(preview), "reason": "INC-3 fixed", "rate_limit": "25", "concurrency": "2",
        "canary_size": "2", "canary_wait_seconds": "45", "return_threshold": "10"})
    job = Job.objects.get()
    assert response.status_code == 302
    assert job.params == {"rate_limit": 25, "concurrency": 2, "canary_size": 2, "canary_wait_seconds": 45,
                          "return_threshold": 10.0}
    page = signed_in.get(reverse("job", args=[job.pk])).content.decode()
    pace = re.search(r'<dd id="job-pace">(.*?)</dd>', page, re.S).group(1)
    assert "at most 25 letters/s" in pace and "2 connections" in pace and "canary of 2, 45s watch" in pace
    assert "pauses above 10.0% returned" in pace
    assert "the first 2 letters go out, then the job watches for returns for 45s" in page


def test_a_pace_the_console_refuses_is_shown_and_makes_no_job(signed_in, place, letters):
    preview = _preview(signed_in, place, "replay")
    response = signed_in.post(reverse("action-confirm"), {"token": _token(preview), "reason": "r",
                                                          "canary_wait_seconds": "10"})
    assert response.status_code == 200 and not Job.objects.exists()
    assert "canary_wait_seconds needs a canary_size" in response.content.decode()


def test_a_job_that_paused_itself_says_why_and_resuming_starts_a_new_canary(signed_in, place, letters, operator):
    from console.jobs.control import finish
    from console.jobs.door.requests import request_job

    job = request_job("replay", actor=operator, reason="r", ids=[letter.pk for letter in letters],
                         canary_size=2, return_threshold=5)
    why = "canary: 2 of 2 letters came back within 30s (100.0%), above the threshold of 5% <b>"
    Job.objects.filter(pk=job.pk).update(pause_reason=why, watch={"base_done": 0, "canary_passed": False})
    finish(job, Job.Status.PAUSED, "paused itself")
    page = signed_in.get(reverse("job", args=[job.pk])).content.decode()
    assert ("Paused itself: canary: 2 of 2 letters came back within 30s (100.0%), above the threshold of 5% "
            "&lt;b&gt;") in page
    signed_in.post(reverse("job-resume", args=[job.pk]), {"reason": "fixed"})
    job.refresh_from_db()
    assert job.status == Job.Status.QUEUED and job.pause_reason == "" and job.watch == {"resumed": True}
    assert any(why in line["message"] for line in job.log)
