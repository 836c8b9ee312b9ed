"""After an edit and replay, the edited letter's page names that job as its last job (it said
"Last job: none": only the copy, which the job replays, was tied to it)."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from console.models import DeadLetter, Job
from tests.web.factory import store_letter

pytestmark = pytest.mark.django_db


def test_the_edited_letter_shows_the_edit_and_replay_job(signed_in, place):
    letter = store_letter(place, b'{"currency": "EUR"}', headers={"x-tenant": "acme"})
    signed_in.post(reverse("letter-edit", args=[letter.pk]), {
        "body": '{"currency": "USD"}', "body_encoding": "text", "headers": json.dumps(letter.headers),
        "reason": "currency was wrong", "confirmed": "1"})
    job = Job.objects.get(kind="edit_replay")

    assert DeadLetter.objects.get(pk=letter.pk).last_job_id == job.pk
    html = signed_in.get(reverse("letter", args=[letter.pk])).content.decode()
    assert f'<dt>Last job</dt><dd><a href="/jobs/{job.pk}/">job {job.pk}</a> (edit and replay' in html
