"""The two-person rule: a purge of any size, and any job over DLO_APPROVAL_THRESHOLD letters,
waits for someone other than its requester to approve it.

A waiting job is not queued for the worker (console.jobs.control.claim also refuses to run it).
Approval queues it once the transaction commits; refusal cancels it; nobody deciding within
DLO_APPROVAL_EXPIRY_SECONDS expires it (:func:`expire_unapproved`, run by Celery beat). Every
decision is audited, and so is a requester's attempt to approve their own job.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from console.models import Job
from console.services import audit
from console.services.audit import Actor, actor_name, actor_user

#: Who expires jobs in the audit.
EXPIRY_ACTOR = "system:approvals"


class ApprovalError(ValueError):
    """An approval or refusal the console refuses, with a message for the operator."""


class SelfApprovalError(ApprovalError):
    """The requester tried to approve their own job."""


def needs_approval(kind: str, count: int) -> bool:
    """Whether a job of this kind on this many letters must wait for a second person."""
    return kind == Job.Kind.PURGE or count > settings.DLO_APPROVAL_THRESHOLD


def hold_for_approval(job: Job, *, actor: Actor) -> None:
    """Make a job just created wait for approval instead of running (inside its transaction)."""
    job.status = Job.Status.AWAITING_APPROVAL
    job.approval_requested = True
    job.expires_at = timezone.now() + timedelta(seconds=settings.DLO_APPROVAL_EXPIRY_SECONDS)
    job.add_log(f"waiting for a second person to approve it until {job.expires_at:%Y-%m-%d %H:%M} UTC")
    job.save()
    audit.record("job.approval_requested", actor=actor, reason=job.reason, ticket=job.ticket, job=job,
                 place=job.place, count=job.expected,
                 details={"kind": job.kind, "expires_at": job.expires_at.isoformat()})


def is_requester(job: Job, actor: Actor) -> bool:
    """Whether ``actor`` is the person who asked for the job."""
    user = actor_user(actor)
    if user is not None and job.actor_id is not None:
        return user.pk == job.actor_id
    return actor_name(actor) == job.actor_name


def do_approve(job: Job, *, actor: Actor, reason: str = "") -> Job:
    """Approve a waiting job: it is queued for the worker when this commits.

    The requester cannot approve their own job: the attempt is audited, then refused with
    :class:`SelfApprovalError`.
    """
    with transaction.atomic():
        job = _waiting(job)
        if not is_requester(job, actor):
            now = timezone.now()
            job.status = Job.Status.QUEUED
            job.approved_by = actor_user(actor)
            job.approved_at = now
            job.add_log(f"approved by {actor_name(actor)}")
            job.save()
            audit.record("job.approved", actor=actor, reason=reason, job=job, place=job.place,
                         count=job.expected, details={"kind": job.kind, "requested_by": job.actor_name})
            from console.services.jobs import enqueue  # jobs imports this module

            enqueue(job)
            return job
        audit.record("job.self_approval_refused", actor=actor, reason=reason, job=job, place=job.place,
                     count=job.expected, outcome="refused", details={"kind": job.kind})
    # Outside the transaction, so the audit row of the attempt stays.
    raise SelfApprovalError(f"you asked for job {job.pk}: another operator or admin must approve it")


@transaction.atomic
def do_refuse(job: Job, *, actor: Actor, reason: str) -> Job:
    """Refuse a waiting job (a reason is required): it is cancelled and never runs."""
    reason = (reason or "").strip()
    if not reason:
        raise ApprovalError("a reason is required to refuse a job")
    job = _waiting(job)
    now = timezone.now()
    job.status = Job.Status.CANCELLED
    job.refused_by = actor_user(actor)
    job.refused_at = now
    job.finished_at = now
    job.add_log(f"refused by {actor_name(actor)}: {reason}")
    job.save()
    audit.record("job.refused", actor=actor, reason=reason, job=job, place=job.place, count=job.expected,
                 outcome="refused", details={"kind": job.kind, "requested_by": job.actor_name})
    return job


def expire_unapproved(now=None) -> list[int]:
    """Expire the jobs whose approval window has passed; returns their ids."""
    now = now or timezone.now()
    expired = []
    due = Job.objects.filter(status=Job.Status.AWAITING_APPROVAL, expires_at__lte=now).values_list("pk", flat=True)
    for job_id in list(due):
        with transaction.atomic():
            job = Job.objects.select_for_update().get(pk=job_id)
            if job.status != Job.Status.AWAITING_APPROVAL:
                continue  # decided meanwhile
            job.status = Job.Status.EXPIRED
            job.finished_at = now
            job.add_log("expired: nobody approved it in time")
            job.save()
            audit.record("job.expired", actor=EXPIRY_ACTOR, job=job, place=job.place, count=job.expected,
                         outcome="expired", details={"kind": job.kind, "requested_by": job.actor_name,
                                                     "expires_at": job.expires_at.isoformat()})
            expired.append(job_id)
    return expired


def _waiting(job: Job) -> Job:
    """The job locked, if it still waits for approval; ApprovalError otherwise."""
    job = Job.objects.select_for_update().get(pk=job.pk)
    if job.status != Job.Status.AWAITING_APPROVAL:
        raise ApprovalError(f"job {job.pk} is {job.get_status_display().lower()}: it does not wait for approval")
    if job.expires_at is not None and job.expires_at <= timezone.now():
        raise ApprovalError(f"job {job.pk} waited too long and expires: ask for it again")
    return job
