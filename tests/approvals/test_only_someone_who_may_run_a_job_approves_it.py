"""An approver must hold the permission the job itself needs: an operator, who may not purge,
cannot approve an admin's purge (finding 5); nor can someone whose scope does not reach the
job's places. Both refusals are audited, and a second admin then approves."""

from __future__ import annotations

import pytest

from console.access.roles import ADMIN, set_role
from console.models import AuditEvent, Job, RoleScope
from tests.approvals.conftest import api_as
from tests.web.factory import memory_place

pytestmark = [pytest.mark.django_db, pytest.mark.approvals]


def test_an_operator_cannot_approve_an_admins_purge_and_a_second_admin_can(
    admin_user, operator, django_user_model, letters, django_capture_on_commit_callbacks,
):
    made = api_as(admin_user).post("/api/jobs/", {"action": "purge", "letters": [letters[0].pk],
                                                  "reason": "GDPR erasure"}, format="json")
    job_id = made.json()["id"]
    assert made.json()["status"] == "awaiting_approval"

    answer = api_as(operator).post(f"/api/jobs/{job_id}/approve/", {"reason": "fine by me"}, format="json")
    assert answer.status_code == 403
    assert "needs the right to ask for one" in answer.json()["detail"]
    assert Job.objects.get(pk=job_id).status == "awaiting_approval"
    refusal = AuditEvent.objects.get(job_id=job_id, action="job.approval_refused")
    assert (refusal.actor_name, refusal.outcome) == ("olga", "refused")

    bea = django_user_model.objects.create_user("bea", password="approve-pass-123")
    set_role(bea, ADMIN)
    with django_capture_on_commit_callbacks(execute=True):
        approved = api_as(bea).post(f"/api/jobs/{job_id}/approve/", {"reason": "checked"}, format="json")
    assert approved.status_code == 200, approved.content
    assert approved.json()["status"] == "queued" and approved.json()["approved_by"] == "bea"


def test_the_approve_button_of_the_page_refuses_an_operator_for_a_purge(admin_user, operator, letters, client):
    made = api_as(admin_user).post("/api/jobs/", {"action": "purge", "letters": [letters[0].pk],
                                                  "reason": "GDPR erasure"}, format="json")
    job_id = made.json()["id"]
    client.force_login(operator)
    client.post(f"/jobs/{job_id}/approve/", {"reason": "fine by me"})
    assert Job.objects.get(pk=job_id).status == "awaiting_approval"
    assert AuditEvent.objects.filter(job_id=job_id, action="job.approval_refused", actor_name="olga").exists()


def test_an_operator_limited_to_another_place_cannot_approve_a_job_there(
    settings, operator, second_operator, memory_broker, letters,
):
    settings.DLO_APPROVAL_THRESHOLD = 2
    elsewhere = memory_place(memory_broker, origin="billing")
    RoleScope.objects.create(user=second_operator, place=elsewhere)
    made = api_as(operator).post("/api/jobs/", {"action": "replay", "letters": [letter.pk for letter in letters],
                                                "reason": "INC-9"}, format="json")
    job_id = made.json()["id"]
    assert made.json()["status"] == "awaiting_approval"
    answer = api_as(second_operator).post(f"/api/jobs/{job_id}/approve/", {"reason": "ok"}, format="json")
    assert answer.status_code in (403, 404)
    assert Job.objects.get(pk=job_id).status == "awaiting_approval"
