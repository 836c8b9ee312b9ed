"""A purge of any size and a job over the threshold wait for a second person; the requester
cannot approve their own; after approval they run; everything is in the audit."""

from __future__ import annotations

import pytest

from console.jobs.door.runner import run_job
from console.models import AuditEvent, DeadLetter, Job
from tests.approvals.conftest import api_as

pytestmark = [pytest.mark.django_db, pytest.mark.approvals]


def _actions(job_id: int) -> list[tuple[str, str]]:
    return list(AuditEvent.objects.filter(job_id=job_id).order_by("id").values_list("action", "actor_name"))


@pytest.mark.role("admin")  # only someone who may purge approves a purge
def test_a_one_letter_purge_waits_then_runs_once_another_person_approves(
    admin_user, operator, letters, queued_jobs, django_capture_on_commit_callbacks,
):
    ada, olga = api_as(admin_user), api_as(operator)
    with django_capture_on_commit_callbacks(execute=True):
        made = ada.post("/api/jobs/", {"action": "purge", "letters": [letters[0].pk], "reason": "GDPR erasure"},
                        format="json")
    assert made.status_code == 202, made.content
    job_id = made.json()["id"]
    assert made.json()["status"] == "awaiting_approval"
    assert queued_jobs == []  # not handed to the worker
    assert run_job(job_id) == "not runnable"  # and a worker that gets it anyway leaves it alone
    assert [j["id"] for j in olga.get("/api/approvals/").json()["results"]] == [job_id]

    own = ada.post(f"/api/jobs/{job_id}/approve/", {"reason": "looks right"}, format="json")
    assert own.status_code == 403
    assert "another admin must approve it" in own.json()["detail"]
    assert Job.objects.get(pk=job_id).status == "awaiting_approval"

    with django_capture_on_commit_callbacks(execute=True):
        approved = olga.post(f"/api/jobs/{job_id}/approve/", {"reason": "ticket checked"}, format="json")
    assert approved.status_code == 200, approved.content
    assert approved.json()["status"] == "queued" and approved.json()["approved_by"] == "olga"
    assert queued_jobs == [job_id]
    assert run_job(job_id) == "succeeded"
    assert DeadLetter.objects.get(pk=letters[0].pk).state == "purged"
    assert DeadLetter.objects.get(pk=letters[1].pk).state == "held"

    assert _actions(job_id)[:4] == [
        ("job.requested", "ada"), ("job.approval_requested", "ada"),
        ("job.self_approval_refused", "ada"), ("job.approved", "olga"),
    ]
    assert AuditEvent.objects.get(job_id=job_id, action="job.approved").reason == "ticket checked"


def test_a_replay_over_the_threshold_waits_and_one_under_it_does_not(
    settings, operator, second_operator, letters, queued_jobs, django_capture_on_commit_callbacks,
):
    settings.DLO_APPROVAL_THRESHOLD = 2
    olga, bob = api_as(operator), api_as(second_operator)
    ids = [letter.pk for letter in letters]
    with django_capture_on_commit_callbacks(execute=True):
        small = olga.post("/api/jobs/", {"action": "replay", "letters": ids[:2], "reason": "fixed"}, format="json")
        large = olga.post("/api/jobs/", {"action": "replay", "letters": ids, "reason": "fixed"}, format="json")
    assert small.json()["status"] == "queued" and large.json()["status"] == "awaiting_approval"
    assert queued_jobs == [small.json()["id"]]

    with django_capture_on_commit_callbacks(execute=True):
        approved = bob.post(f"/api/jobs/{large.json()['id']}/approve/", {}, format="json")
    assert approved.status_code == 200, approved.content
    assert queued_jobs == [small.json()["id"], large.json()["id"]]
    assert run_job(small.json()["id"]) == "succeeded"
    job = Job.objects.get(pk=large.json()["id"])
    assert run_job(job.pk) == "succeeded"
    job.refresh_from_db()
    assert job.skipped == 2 and job.done == 1  # the small job replayed two of them already
    assert [a for a, _ in _actions(job.pk)][:3] == ["job.requested", "job.approval_requested", "job.approved"]


def test_refusal_needs_a_reason_refuses_the_job_and_is_audited(admin_user, operator, letters, queued_jobs):
    made = api_as(admin_user).post("/api/jobs/", {"action": "purge", "letters": [letters[0].pk], "reason": "spam"},
                                   format="json")
    job_id = made.json()["id"]
    olga = api_as(operator)
    assert olga.post(f"/api/jobs/{job_id}/refuse/", {}, format="json").status_code == 400
    refused = olga.post(f"/api/jobs/{job_id}/refuse/", {"reason": "these are customer orders"}, format="json")
    assert refused.status_code == 200 and refused.json()["status"] == "refused"
    assert refused.json()["refused_by"] == "olga"
    assert olga.post(f"/api/jobs/{job_id}/approve/", {}, format="json").status_code == 409  # too late
    assert run_job(job_id) == "not runnable" and queued_jobs == []
    assert DeadLetter.objects.get(pk=letters[0].pk).state == "held"
    event = AuditEvent.objects.get(job_id=job_id, action="job.refused")
    assert (event.actor_name, event.reason, event.outcome) == ("olga", "these are customer orders", "refused")
