"""Finding 11 of issue 28: a number is ASCII digits. ``'²'.isdigit()`` is true and ``int('²')``
fails, so the hand-made checks gave a 500 in twelve places; ``int('٣')`` (Arabic-Indic three) is
3, so the same checks took a number nobody typed. Every one of the twelve now answers 400 (the
API, a job's filter) or shows the refusal (the letters page), and takes neither."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from console.models import AuditEvent, Job
from tests.web.factory import store_letter

pytestmark = [pytest.mark.django_db, pytest.mark.role("admin")]

#: A superscript two (isdigit() but not int()), an Arabic-Indic three (int() reads it as 3) and
#: a full-width one.
NOT_ASCII = ["²", "٣", "１"]

API_QUERIES = [
    ("/api/letters/", "weekday"),
    ("/api/letters/", "hour"),
    ("/api/letters/", "cursor"),
    ("/api/groups/", "place"),
    ("/api/places/", "broker"),
    ("/api/origins/", "broker"),
    ("/api/notifications/deliveries/", "channel"),
    ("/api/audit/", "job"),
    ("/api/audit/", "letter"),
]


@pytest.fixture
def api(operator) -> APIClient:
    client = APIClient()
    client.force_authenticate(operator)
    return client


@pytest.mark.parametrize("digit", NOT_ASCII)
@pytest.mark.parametrize(("path", "parameter"), API_QUERIES)
def test_a_list_refuses_a_number_in_other_digits(api, place, path, parameter, digit):
    store_letter(place)
    answer = api.get(path, {parameter: digit})
    assert answer.status_code == 400, (path, parameter, answer.content)
    assert parameter in answer.content.decode()  # the answer names what is wrong
    assert api.get(path, {parameter: "3"}).status_code == 200  # ASCII digits still work


@pytest.mark.parametrize("digit", NOT_ASCII)
def test_a_jobs_filter_refuses_a_weekday_in_other_digits(api, place, queued_jobs, digit):
    store_letter(place)
    selection = {"filter": {"weekday": digit}}
    preview = api.post("/api/jobs/preview/", selection, format="json")
    assert preview.status_code == 400 and "weekday" in preview.json()["detail"], preview.content
    created = api.post("/api/jobs/", {**selection, "action": "replay", "reason": "r"}, format="json")
    assert created.status_code == 400 and "weekday" in created.json()["detail"], created.content
    assert not Job.objects.exists() and queued_jobs == []
    assert not AuditEvent.objects.filter(action="job.requested").exists()
    assert api.post("/api/jobs/preview/", {"filter": {"weekday": "3"}}, format="json").status_code == 200


@pytest.mark.parametrize("digit", NOT_ASCII)
def test_the_letters_page_shows_the_refusal(client, operator, place, digit):
    letter = store_letter(place)
    client.force_login(operator)
    page = client.get("/letters/", {"weekday": digit})
    assert page.status_code == 200
    html = page.content.decode()
    assert "weekday must be a whole number from 1 to 7" in html
    assert f'href="/letters/{letter.pk}/"' not in html  # nothing listed for a filter refused
