"""The approval threshold counts what one requester asked for in one dead place over a sliding
window, not one job at a time (finding 8): jobs of a threshold's worth each cannot slip through
one by one. Another place, another requester, or a window gone by start afresh. A job whose
size is not known (a capture of a place whose depth the broker did not tell) waits too."""

from __future__ import annotations

from datetime import timedelta

import pytest

from console.jobs.door.requests import request_job
from console.models import Job
from tests.approvals.conftest import api_as
from tests.web.factory import memory_place, store_letter

pytestmark = [pytest.mark.django_db, pytest.mark.approvals]


@pytest.fixture
def orders(memory_broker):
    place = memory_place(memory_broker)
    return place, [store_letter(place, f'{{"order": {i}}}'.encode()) for i in range(9)]


def _replay(user, ids) -> dict:
    answer = api_as(user).post("/api/jobs/", {"action": "replay", "letters": ids, "reason": "INC-1"}, format="json")
    assert answer.status_code == 202, answer.content
    return answer.json()


def test_three_jobs_of_a_thresholds_worth_each_the_second_waits(settings, operator, orders):
    settings.DLO_APPROVAL_THRESHOLD = 3
    _, letters = orders
    ids = [letter.pk for letter in letters]
    first, second, third = _replay(operator, ids[:3]), _replay(operator, ids[3:6]), _replay(operator, ids[6:])
    assert [first["status"], second["status"], third["status"]] == ["queued", "awaiting_approval",
                                                                     "awaiting_approval"]
    said = Job.objects.get(pk=second["id"]).log[-1]["message"]
    assert "6 letters of mem:orders.dlq asked for by olga within 60 minutes, above 3" in said


def test_another_requester_or_another_place_starts_afresh(settings, operator, second_operator, memory_broker,
                                                          orders):
    settings.DLO_APPROVAL_THRESHOLD = 3
    _, letters = orders
    billing = memory_place(memory_broker, origin="billing")
    bills = [store_letter(billing, b"{}", origin="billing") for _ in range(3)]
    assert _replay(operator, [letter.pk for letter in letters[:3]])["status"] == "queued"
    assert _replay(second_operator, [letter.pk for letter in letters[3:6]])["status"] == "queued"
    assert _replay(operator, [letter.pk for letter in bills])["status"] == "queued"


def test_jobs_older_than_the_window_no_longer_count(settings, operator, orders):
    settings.DLO_APPROVAL_THRESHOLD = 3
    _, letters = orders
    first = _replay(operator, [letter.pk for letter in letters[:3]])
    Job.objects.filter(pk=first["id"]).update(
        created_at=Job.objects.get(pk=first["id"]).created_at
        - timedelta(seconds=settings.DLO_APPROVAL_WINDOW_SECONDS + 1))
    assert _replay(operator, [letter.pk for letter in letters[3:6]])["status"] == "queued"


def test_a_capture_of_unknown_size_waits_and_one_with_a_limit_does_not(operator, orders):
    place, _ = orders
    place.depth = None
    place.save(update_fields=["depth"])
    unknown = api_as(operator).post(f"/api/places/{place.pk}/capture/", {"reason": "triage"}, format="json")
    assert unknown.status_code == 202, unknown.content
    assert unknown.json()["status"] == "awaiting_approval"
    assert "how many letters it touches is not known" in Job.objects.get(pk=unknown.json()["id"]).log[-1]["message"]
    Job.objects.filter(pk=unknown.json()["id"]).update(status="cancelled")
    limited = request_job("capture", place=place, limit=5, actor=operator, reason="a few")
    assert limited.status == "queued"
