"""Counts are worded in their number: a job over one letter says "1 letter replayed", never
"1 letters replayed" (its log on the job page, and every other count the console writes goes
through console.wording.counted)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import Job
from console.wording import counted
from tests.web.factory import store_letter

pytestmark = pytest.mark.django_db


def test_a_replay_of_one_letter_says_one_letter(signed_in, operator, place):
    letter = store_letter(place, b'{"order": 1}')
    job = request_job("replay", actor=operator, reason="fixed", ids=[letter.pk])
    assert run_job(job.pk) == "succeeded"

    messages = [entry["message"] for entry in Job.objects.get(pk=job.pk).log]
    assert any(message.startswith("1 letter replayed,") for message in messages), messages
    page = signed_in.get(reverse("job", args=[job.pk])).content.decode()
    assert "1 letter replayed" in page and "1 letters" not in page


def test_two_letters_are_letters():
    assert [counted(n, "letter") for n in (0, 1, 2)] == ["0 letters", "1 letter", "2 letters"]
    assert counted(1, "match", "matches") == "1 match" and counted(3, "match", "matches") == "3 matches"
