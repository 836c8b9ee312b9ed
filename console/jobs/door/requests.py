"""The one door through which every job is requested, whoever asks: a page, the API, a
management command, a Celery task, the pipeline or (later) a rule.

:func:`request_job` does the same for every kind (console.jobs.kinds):

1. the reason is required, and the actor must hold the kind's permission;
2. the kind parses and validates its typed parameters, and does the checks that talk to a
   broker or to Spark, before any transaction opens;
3. in one transaction: the kind plans the job (which letters, how many per dead place, which
   queues it publishes into); every place and target, and every origin a replay publishes
   into, must be in the actor's scope, as the broker's topology says, not the letters' headers
   (console.access.guards); the job row and its ``job.requested`` audit row are written; the
   two-person rule (console.jobs.door.approvals) makes it wait, or it is queued for the worker once
   the transaction commits.

So no path can skip the scope guard, the approval rule or the audit.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import transaction

from console.access.actors import Actor, RuleActor
from console.access.guards import guard_places, guard_reach
from console.access.roles import has, role_holding
from console.access.scope import OutOfScope
from console.jobs.door import approvals
from console.jobs.door.queueing import enqueue
from console.jobs.kinds import kind as kind_named
from console.models import Job
from console.refusals import require_reason
from console.services import audit
from console.services.audit import actor_name, actor_user
from console.services.jobs import JobError


def request_job(kind: str, *, actor: Actor, reason: str, ticket: str = "", run_here: bool = False,
                **given: Any) -> Job:
    """Ask for a job of ``kind`` with the kind's parameters and inputs in ``given`` (e.g.
    ``ids=`` or ``filter=`` for the letters kinds, ``place=`` for capture and shovel).

    Returns the job, queued for the worker or waiting for approval; ``run_here`` leaves an
    approved-at-once job ``queued`` without handing it to the worker (the caller runs it, as
    ``manage.py pipeline replay`` does). Raises JobError with a message for the requester.
    """
    job_kind = kind_named(kind)
    reason = require_reason(reason, JobError)
    if not has(actor, job_kind.permission):
        raise JobError(f"a {kind.replace('_', ' ')} job needs the {role_holding(job_kind.permission)} role")
    place = given.get("place")
    if place is not None:
        _guarded(guard_places, actor, [place.pk])  # before anything is asked of its broker
    params = job_kind.parse(given)
    checked = job_kind.check_outside(params, given)
    with transaction.atomic():
        plan = job_kind.plan(params, given, actor=actor, checked=checked)
        _guarded(guard_reach, actor, plan.per_place, plan.targets, lambda: job_kind.origins(plan.selection))
        total, asked = plan.total, params.to_json()
        job = Job.objects.create(
            kind=kind, actor=actor_user(actor), actor_name=actor_name(actor), reason=reason, ticket=ticket[:200],
            place=plan.place, params=asked, selection=plan.selection,
            per_place={str(place_id): count for place_id, count in plan.per_place.items()},
            expected=total or 0, total=total or 0,
        )
        audit.record("job.requested", actor=actor, reason=reason, ticket=ticket, job=job, place=job.place,
                     target=", ".join(target.name for target in plan.targets)[:500],
                     letter_ids=plan.selection.get("ids", []), count=total or 0,
                     details={"kind": kind, **asked, **plan.details,
                              "per_place": job.per_place})
        job_kind.requested(job, plan, actor=actor)
        why = "" if isinstance(actor, RuleActor) else approvals.needs_approval(job)
        if isinstance(actor, RuleActor):
            approvals.approved_when_enabled(job, actor)
        if why:
            approvals.hold_for_approval(job, why, actor=actor)
        elif not run_here:
            enqueue(job)
    return job


def _guarded(guard: Callable[..., None], actor: Actor, *args: object) -> None:
    try:
        guard(actor, *args)
    except OutOfScope as exc:
        raise JobError(str(exc)) from None
