"""A job nobody approves expires after DLO_APPROVAL_EXPIRY_SECONDS, through the periodic task."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from console.jobs import tasks
from console.jobs.door.approvals import ApprovalError, do_approve
from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import AuditEvent, Job

pytestmark = [pytest.mark.django_db, pytest.mark.approvals]


def test_the_periodic_task_expires_only_jobs_past_their_time(settings, admin_user, operator, letters):
    settings.DLO_APPROVAL_EXPIRY_SECONDS = 3600
    old = request_job("purge", actor=admin_user, reason="spam", ids=[letters[0].pk])
    fresh = request_job("purge", actor=admin_user, reason="spam", ids=[letters[1].pk])
    assert fresh.expires_at - fresh.created_at >= timedelta(seconds=3599)
    Job.objects.filter(pk=old.pk).update(expires_at=timezone.now() - timedelta(seconds=1))

    assert tasks.expire_unapproved_jobs() == [old.pk]  # what Celery beat runs every minute

    old.refresh_from_db()
    fresh.refresh_from_db()
    assert (old.status, fresh.status) == ("expired", "awaiting_approval")
    assert old.is_finished and old.finished_at is not None
    assert run_job(old.pk) == "not runnable"
    with pytest.raises(ApprovalError, match="expired"):
        do_approve(old, actor=operator)
    event = AuditEvent.objects.get(job_id=old.pk, action="job.expired")
    assert (event.actor_name, event.outcome) == ("system:approvals", "expired")
    assert tasks.expire_unapproved_jobs() == []  # once


def test_approval_after_the_deadline_but_before_the_task_is_refused(admin_user, operator, letters):
    job = request_job("purge", actor=admin_user, reason="spam", ids=[letters[0].pk])
    Job.objects.filter(pk=job.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    with pytest.raises(ApprovalError, match="waited too long"):
        do_approve(job, actor=operator)
    job.refresh_from_db()
    assert job.status == "awaiting_approval" and job.approved_by is None
