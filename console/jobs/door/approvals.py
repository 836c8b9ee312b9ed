"""The two-person rule: some jobs wait for someone other than their requester to approve them.

A job waits when it is a purge (of any size); when its size is not known (a capture of a place
whose depth the broker did not tell); or when, in some dead place, what its requester asked
for within the last DLO_APPROVAL_WINDOW_SECONDS, this job included, comes to more than
DLO_APPROVAL_THRESHOLD letters. So ten jobs of a threshold's worth each cannot slip through one
at a time: the second waits. Jobs that were themselves approved do not count again.

A waiting job is not queued for the worker (console.jobs.control.claim also refuses to run it).
The approver must hold the permission the job itself needs (only an admin approves a purge) and
have its places and targets in scope. Approval queues it once the transaction commits; refusal
cancels it; nobody deciding within DLO_APPROVAL_EXPIRY_SECONDS expires it
(:func:`expire_unapproved`, run by Celery beat). Every decision is audited, and so are a
requester's attempt to approve their own job and an approval refused for want of rights.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from console.access.actors import Actor, RuleActor
from console.access.guards import guard_reach
from console.access.roles import ROLES, has
from console.access.scope import OutOfScope
from console.access.topology import Topology
from console.jobs.door.queueing import enqueue
from console.jobs.kinds import kind
from console.models import DeadPlace, Job
from console.notifications.events import notify
from console.refusals import Conflict, Forbidden, require_reason
from console.services import audit
from console.services.audit import actor_name, actor_user
from console.wording import counted

#: Who expires jobs in the audit.
EXPIRY_ACTOR = "system:approvals"


class ApprovalError(Conflict):
    """An approval or refusal the console refuses, with a message for the operator."""


class SelfApprovalError(ApprovalError):
    """The requester tried to approve their own job."""

    status = Forbidden.status


class NotAllowedToApprove(ApprovalError):
    """The approver lacks the job's own permission, or its places or targets are out of their scope."""

    status = Forbidden.status


def needs_approval(job: Job) -> str:
    """Why a job just made must wait for a second person; "" when it may run at once."""
    if kind(job.kind).always_approved:
        return f"a {job.get_kind_display().lower()} always needs a second person"
    if any(count is None for count in job.per_place.values()):
        return "how many letters it touches is not known"
    threshold = settings.DLO_APPROVAL_THRESHOLD
    since = timezone.now() - timedelta(seconds=settings.DLO_APPROVAL_WINDOW_SECONDS)
    earlier = (Job.objects.filter(actor_name=job.actor_name, created_at__gte=since, approval_requested=False)
               .exclude(pk=job.pk).values_list("per_place", flat=True))
    asked = dict(job.per_place)
    for counts in earlier:
        for place_id, count in counts.items():
            if place_id in asked and count:
                asked[place_id] += count
    over = {place_id: count for place_id, count in asked.items() if count > threshold}
    if not over:
        return ""
    place_id, count = max(over.items(), key=lambda item: item[1])
    place = DeadPlace.objects.filter(pk=place_id).first()
    return (f"{counted(count, 'letter')} of {place or 'one dead place'} asked for by {job.actor_name} within "
            f"{settings.DLO_APPROVAL_WINDOW_SECONDS // 60} minutes, above {threshold}")


def approved_when_enabled(job: Job, actor: RuleActor) -> None:
    """A rule's job (console.access.actors.RuleActor) does not wait: the person who enabled the
    rule approved it then, having seen its dry run (what an approver of each job would see,
    job after job), and holding the rights of its action (only an admin enables a discard
    rule). So the job names them as its approver. A rule runs unattended: jobs waiting for a
    second person one by one would stop exactly the retries it exists for."""
    job.approved_by = actor.user
    job.approved_at = timezone.now()
    job.add_log(f"approved when {actor.user} enabled the rule")
    job.save(update_fields=["approved_by", "approved_at", "log"])


def hold_for_approval(job: Job, why: str, *, actor: Actor) -> None:
    """Make a job just created wait for approval instead of running (inside its transaction)."""
    job.status = Job.Status.AWAITING_APPROVAL
    job.approval_requested = True
    job.expires_at = timezone.now() + timedelta(seconds=settings.DLO_APPROVAL_EXPIRY_SECONDS)
    job.add_log(f"waiting for a second person to approve it until {job.expires_at:%Y-%m-%d %H:%M} UTC: {why}")
    job.save()
    audit.record("job.approval_requested", actor=actor, reason=job.reason, ticket=job.ticket, job=job,
                 place=job.place, count=job.expected,
                 details={"kind": job.kind, "why": why, "expires_at": job.expires_at.isoformat()})
    notify("job.approval_needed", key=f"job:{job.pk}", place=job.place,
           subject=f"job {job.pk} ({job.get_kind_display().lower()}) by {job.actor_name} waits for approval",
           details={"job": job.pk, "why": why, "reason": job.reason},
           audience=lambda user: not is_requester(job, user) and not may_approve(job, user))


def is_requester(job: Job, actor: Actor) -> bool:
    """Whether ``actor`` is the person who asked for the job."""
    user = actor_user(actor)
    if user is not None and job.actor_id is not None:
        return user.pk == job.actor_id
    return actor_name(actor) == job.actor_name


def approving_roles(job: Job) -> str:
    """The roles that may approve the job, as people read them ("admin", "operator or admin"):
    those holding the job's own permission. Names no one, so any reader of the job may see it."""
    permission = kind(job.kind).permission
    return " or ".join(role for role, codenames in ROLES.items() if permission in codenames)


def may_approve(job: Job, actor: Actor, *, topology: Topology | None = None) -> str:
    """Why ``actor`` may not approve the job; "" when they may: they need the job's own
    permission and its places and targets in their scope."""
    job_kind = kind(job.kind)
    if not has(actor, job_kind.permission):
        return f"approving a {job.get_kind_display().lower()} needs the right to ask for one"
    try:
        # What brokers said is kept on the job object (or the caller's, for a page of jobs):
        # asked once, however many people are weighed for it.
        topology = topology or job.__dict__.setdefault("_dlo_topology", Topology())
        guard_reach(actor, job.per_place, job_kind.targets(job), lambda: job_kind.origins(job.selection),
                    topology=topology)
    except OutOfScope as exc:
        return str(exc)
    return ""


def do_approve(job: Job, *, actor: Actor, reason: str = "") -> Job:
    """Approve a waiting job: it is queued for the worker when this commits.

    The requester cannot approve their own job, nor can someone without the job's own rights:
    the attempt is audited, then refused (:class:`SelfApprovalError`, :class:`NotAllowedToApprove`).
    """
    with transaction.atomic():
        job = _waiting(job)
        if is_requester(job, actor):
            audit.record("job.self_approval_refused", actor=actor, reason=reason, job=job, place=job.place,
                         count=job.expected, outcome="refused", details={"kind": job.kind})
            refusal: ApprovalError = SelfApprovalError(
                f"you asked for job {job.pk}: another {approving_roles(job)} must approve it")
        elif why := may_approve(job, actor):
            audit.record("job.approval_refused", actor=actor, reason=reason, job=job, place=job.place,
                         count=job.expected, outcome="refused", details={"kind": job.kind, "why": why})
            refusal = NotAllowedToApprove(f"you may not approve job {job.pk}: {why}")
        else:
            now = timezone.now()
            job.status = Job.Status.QUEUED
            job.approved_by = actor_user(actor)
            job.approved_at = now
            job.add_log(f"approved by {actor_name(actor)}")
            job.save()
            audit.record("job.approved", actor=actor, reason=reason, job=job, place=job.place,
                         count=job.expected, details={"kind": job.kind, "requested_by": job.actor_name})
            enqueue(job)
            return job
    # Outside the transaction, so the audit row of the attempt stays.
    raise refusal


@transaction.atomic
def do_refuse(job: Job, *, actor: Actor, reason: str) -> Job:
    """Refuse a waiting job (a reason is required): it is refused and never runs."""
    reason = require_reason(reason, ApprovalError, "to refuse a job")
    job = _waiting(job)
    now = timezone.now()
    job.status = Job.Status.REFUSED
    job.refused_by = actor_user(actor)
    job.refused_at = now
    job.finished_at = now
    job.add_log(f"refused by {actor_name(actor)}: {reason}")
    job.save()
    audit.record("job.refused", actor=actor, reason=reason, job=job, place=job.place, count=job.expected,
                 outcome="refused", details={"kind": job.kind, "requested_by": job.actor_name})
    return job


def expire_unapproved(now: datetime | None = None) -> list[int]:
    """Expire the jobs whose approval window has passed; returns their ids."""
    now = now or timezone.now()
    expired = []
    due = Job.objects.filter(status=Job.Status.AWAITING_APPROVAL, expires_at__lte=now).values_list("pk", flat=True)
    for job_id in list(due):
        with transaction.atomic():
            job = Job.objects.select_for_update().get(pk=job_id)
            if job.status != Job.Status.AWAITING_APPROVAL or job.expires_at is None:
                continue  # decided meanwhile (a waiting job always has its expiry)
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
