"""The pace of a replay through the API: rate limit, concurrency, canary and return threshold
are kept on the job and in the audit; settings that make no sense are refused with a reason."""

from __future__ import annotations

import pytest

from console.models import AuditEvent, Job
from tests.api.helpers import dead_message

pytestmark = pytest.mark.django_db


def test_a_paced_replay_keeps_its_settings_and_audits_them(api, capture):
    capture([dead_message("a"), dead_message("b")])
    response = api.post("/api/jobs/", {
        "action": "replay", "filter": {"origin": "orders"}, "reason": "slowly, INC-9",
        "rate_limit": 50, "concurrency": 3, "canary_size": 1, "canary_wait_seconds": 10, "return_threshold": 2.5,
    }, format="json")
    assert response.status_code == 202, response.content
    body = response.json()
    assert {key: body[key] for key in ("rate_limit", "concurrency", "canary_size", "canary_wait_seconds",
                                       "return_threshold", "pause_reason")} == {
        "rate_limit": 50, "concurrency": 3, "canary_size": 1, "canary_wait_seconds": 10,
        "return_threshold": 2.5, "pause_reason": ""}
    job = Job.objects.get(pk=body["id"])
    requested = AuditEvent.objects.get(job_id=job.pk, action="job.requested")
    assert requested.details["concurrency"] == 3 and requested.details["canary_size"] == 1
    assert requested.details["return_threshold"] == 2.5


@pytest.mark.parametrize("pace, message", [
    ({"canary_wait_seconds": 5}, "canary_wait_seconds needs a canary_size"),
    ({"action": "mark_failed", "canary_size": 3}, "a mark failed job does not take canary_size"),
    ({"action": "mark_failed", "concurrency": 2}, "a mark failed job does not take concurrency"),
])
def test_pace_that_makes_no_sense_is_refused(api, capture, pace, message):
    capture([dead_message("a")])
    payload = {"action": "replay", "filter": {"origin": "orders"}, "reason": "x", **pace}
    response = api.post("/api/jobs/", payload, format="json")
    assert response.status_code == 400
    assert response.json() == {"detail": message}
    assert not Job.objects.exclude(kind="capture").exists()


@pytest.mark.parametrize("field, value", [
    ("concurrency", 0), ("concurrency", 17), ("canary_size", 0), ("return_threshold", 101),
    ("return_threshold", -1), ("canary_wait_seconds", 3601), ("rate_limit", 0),
])
def test_pace_out_of_bounds_is_refused_field_by_field(api, capture, field, value):
    capture([dead_message("a")])
    response = api.post("/api/jobs/", {"action": "replay", "filter": {"origin": "orders"}, "reason": "x",
                                       "canary_size": 1, field: value}, format="json")
    assert response.status_code == 400
    assert field in response.json()
