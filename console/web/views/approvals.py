"""Approvals: the jobs that wait for a second person, and the approve and refuse buttons.

The job page (console.web.views.jobs) shows a waiting job with the same frozen preview its
requester saw (:func:`approval_context`) and these buttons for anyone but the requester.
"""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_POST

from console.access.redaction_policy import for_user, mask_jobs
from console.access.scope import visible
from console.access.topology import Topology
from console.jobs.door.approvals import ApprovalError, approving_roles, do_approve, do_refuse, is_requester, may_approve
from console.models import DeadLetter, Job
from console.services.jobs import JobError, preview_frozen
from console.web.job_actions import act_on_job
from console.web.letter_lists import with_previews

SAMPLE_SIZE = 10


def approval_context(request, job: Job) -> dict:
    """What the job page shows about a waiting job: the frozen preview and who may decide."""
    if not job.is_awaiting_approval:
        return {}
    why_not = _why_not(job, request.user)
    context = {"may_decide": not why_not, "why_not": why_not, "approvers": approving_roles(job),
               "approval_preview": None}
    try:
        summary = preview_frozen(job.selection, reader=request.user, sample=SAMPLE_SIZE)
    except JobError:
        return context  # no frozen letters to show (a capture or shovel takes a place as the broker holds it)
    sample = with_previews(request.user, DeadLetter.objects.filter(id__in=summary["sample"]))
    redactor = for_user(request.user)  # the frozen filter may name what a rule masks
    selection = summary["selection"] if redactor is None else redactor.value(summary["selection"])
    context["approval_preview"] = {**summary, "selection": selection, "sample_letters": sample}
    return context


@login_required
def approval_list(request):
    """Jobs waiting for approval, oldest first (the first to expire)."""
    waiting = Job.objects.filter(status=Job.Status.AWAITING_APPROVAL).select_related("place", "place__broker")
    jobs = list(visible(request.user, waiting).order_by("expires_at", "id")[:500])
    topology = Topology()  # each broker asked once for the whole page
    for job in jobs:
        job.why_not = _why_not(job, request.user, topology)
    mask_jobs(request.user, jobs)
    return render(request, "web/approvals.html", {"jobs": jobs})


def _why_not(job: Job, user, topology: Topology | None = None) -> str:
    """Why ``user`` may not decide on the waiting job; "" when they may."""
    if is_requester(job, user):
        return f"You asked for this job: another {approving_roles(job)} must approve it. You can cancel it below."
    why = may_approve(job, user, topology=topology)
    return f"You may not approve this job: {why}." if why else ""


@login_required
@require_POST
def job_approve(request, job_id: int):
    return act_on_job(request, job_id, do_approve, "Job {pk} approved: it is queued.", refused=ApprovalError)


@login_required
@require_POST
def job_refuse(request, job_id: int):
    return act_on_job(request, job_id, do_refuse, "Job {pk} refused: it will not run.", refused=ApprovalError)
