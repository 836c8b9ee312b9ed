"""Steering jobs once they exist: cancel, pause, resume. Each change is audited."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from console.access.actors import Actor
from console.jobs.control import is_stale
from console.jobs.door.queueing import enqueue
from console.jobs.kinds import kind
from console.models import Job
from console.services import audit
from console.services.audit import actor_name
from console.services.jobs import JobStateError


@transaction.atomic
def do_cancel_job(job: Job, *, actor: Actor, reason: str = "") -> Job:
    """Ask the job to stop after its current batch; a queued or paused job stops at once."""
    job = Job.objects.select_for_update().get(pk=job.pk)
    if job.is_finished:
        raise JobStateError(f"job {job.pk} has already ended ({job.status})")
    job.cancel_requested = True
    if job.status in Job.NOT_STARTED:
        job.status = Job.Status.CANCELLED
        job.finished_at = timezone.now()
        job.add_log(f"cancelled by {actor_name(actor)} before it ran further")
    job.save()
    audit.record("job.cancel", actor=actor, reason=reason, job=job, count=job.done)
    kind(job.kind).cancelled(job, actor=actor, reason=reason)
    return job


@transaction.atomic
def do_pause_job(job: Job, *, actor: Actor, reason: str = "") -> Job:
    job = Job.objects.select_for_update().get(pk=job.pk)
    if job.is_finished or job.status in (Job.Status.PAUSED, Job.Status.AWAITING_APPROVAL):
        raise JobStateError(f"job {job.pk} is {job.status}: it cannot be paused")
    if not kind(job.kind).can_pause:
        raise JobStateError(f"job {job.pk} cannot be paused: the broker moves the whole queue in one go; "
                       "cancel it to stop the shovel (what it moved stays moved)")
    job.pause_requested = True
    if job.status == Job.Status.QUEUED:
        job.status = Job.Status.PAUSED
    job.save()
    audit.record("job.pause", actor=actor, reason=reason, job=job)
    return job


@transaction.atomic
def do_resume_job(job: Job, *, actor: Actor, reason: str = "") -> Job:
    """Go on with a paused job (or one whose worker died) from its cursor.

    A job alive in a worker is refused: made ``queued`` again, a second worker would claim
    it and both would publish the same letters.
    """
    job = Job.objects.select_for_update().get(pk=job.pk)
    if job.is_finished:
        raise JobStateError(f"job {job.pk} has already ended ({job.status})")
    if job.status == Job.Status.AWAITING_APPROVAL:
        raise JobStateError(f"job {job.pk} waits for approval: it runs once another operator approves it")
    if job.status in Job.IN_WORKER and not is_stale(job):
        raise JobStateError(f"job {job.pk} is {job.status} in a worker: there is nothing to resume "
                       "(a job whose worker dies is resumed by itself)")
    job.pause_requested = False
    job.status = Job.Status.QUEUED
    if job.pause_reason:  # it paused itself (console.jobs.engines.returns): a new canary, returns counted anew
        job.add_log(f"it had paused itself: {job.pause_reason}")
        job.watch = {"resumed": True}
        job.pause_reason = ""
    job.add_log(f"resumed by {actor_name(actor)}")
    job.save()
    audit.record("job.resume", actor=actor, reason=reason, job=job)
    enqueue(job)
    return job
