"""Jobs: the list (filtered by status), one job's progress (polled by htmx until it ends), and
the pause, resume and cancel buttons."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseClientRefresh, HttpResponseStopPolling

from console.access.redaction_policy import mask_events, mask_jobs
from console.access.roles import has
from console.access.scope import visible
from console.jobs.door.steering import do_cancel_job, do_pause_job, do_resume_job
from console.jobs.kinds import kind
from console.jobs.kinds.base import SELECTION
from console.models import AuditEvent, Broker, DeadLetter, DeadPlace, Job, LetterState
from console.services.selection import arrived_since
from console.web.job_actions import act_on_job
from console.web.letter_lists import export_links
from console.web.paging import NEWEST, page_sorted
from console.web.views.approvals import approval_context

#: The steering buttons: url name -> (service, what the message says happened).
CONTROLS = {
    "pause": (do_pause_job, "Job {pk}: pause requested: it stops after the current batch."),
    "resume": (do_resume_job, "Job {pk}: resumed."),
    "cancel": (do_cancel_job, "Job {pk}: cancel requested."),
}


def controls(job: Job) -> list[str]:
    """The buttons that apply to the job as it is now (none once it has ended)."""
    if job.is_finished:
        return []
    if job.status == Job.Status.AWAITING_APPROVAL or not kind(job.kind).can_pause:
        return ["cancel"]
    if job.status == Job.Status.PAUSED:
        return ["resume", "cancel"]
    if job.pause_requested:
        return ["cancel"]
    return ["pause", "cancel"]


@login_required
def job_list(request):
    jobs = visible(request.user, Job.objects.select_related("place", "place__broker"))
    status = request.GET.get("status", "")
    if status in Job.Status.values:
        jobs = jobs.filter(status=status)
    elif status == "active":
        jobs = jobs.exclude(status__in=Job.FINISHED)
    page = page_sorted(jobs, request.GET.get("before"), NEWEST)
    mask_jobs(request.user, page.rows)
    return render(request, "web/jobs.html", {"page": page, "status": status, "statuses": Job.Status.choices})


@login_required
def job_detail(request, job_id: int):
    """The full page, or (for htmx) just the progress part: HTTP 286 stops polling once ended."""
    job = get_object_or_404(Job.objects.select_related("place", "place__broker"), pk=job_id)
    # What the operator saw is what the job touches: how many arrived since (none for a job
    # with no frozen filter). Read, like the approval's preview, before the job's texts are
    # masked for the page.
    seen = request.GET.get("seen", "")
    if request.htmx and seen and seen != job.status and (seen in _PAGE_CHANGES or job.status in _PAGE_CHANGES):
        # Approved or refused since the page was drawn: the approval part goes, the page is new.
        return HttpResponseClientRefresh()
    arrived = arrived_since(job.selection, reader=request.user) if not request.htmx else 0
    approval = approval_context(request, job) if not request.htmx else {}
    failed = failed_letters(request.user, job) if job.is_finished and not request.htmx else {}
    mask_jobs(request.user, [job])
    context: dict[str, Any] = {"job": job, "job_kind": kind(job.kind), "controls": controls(job),
                               "named_filter": named_filter((job.selection or {}).get("filter") or {}), **failed,
                               "exports": export_links({}, reverse("api-job-export", args=[job.pk]))}
    if request.htmx:
        # Swap the buttons only when they change, so keyboard focus on one is not lost each second.
        context["controls_changed"] = request.GET.get("shown", "") != ",".join(context["controls"])
        response = render(request, "web/partials/job_progress.html", context)
        if job.is_finished:
            response.status_code = HttpResponseStopPolling.status_code
        return response
    context["arrived_since"] = arrived
    context.update(approval)
    return render(request, "web/job.html", context)


#: A job's status that, left or reached, changes more of its page than the progress part.
_PAGE_CHANGES = {Job.Status.AWAITING_APPROVAL, Job.Status.REFUSED, Job.Status.EXPIRED}


def named_filter(given: dict[str, Any]) -> list[tuple[str, str]]:
    """A job's filter as its page shows it: a place or a broker by its name, with its id beside."""
    shown = []
    for key, value in given.items():
        if key == "place" and (place := DeadPlace.objects.select_related("broker").filter(pk=value).first()):
            shown.append((key, f"{place.broker.name} / {place.name} (#{place.pk})"))
        elif key == "broker" and (broker := Broker.objects.filter(pk=value).first()):
            shown.append((key, f"{broker.name} (#{broker.pk})"))
        else:
            shown.append((key, str(value)))
    return shown


def failed_letters(user, job: Job) -> dict[str, Any]:
    """The letters the job could not act on, as its audit rows say (each place's, with the
    broker's reasons, masked for ``user``), and those still held that ``user`` may see: what a
    retry of the same kind would act on, with the job's own parameters."""
    events = mask_events(user, list(visible(user, AuditEvent.objects.filter(job_id=job.pk, outcome="failed"))
                                    .order_by("id")))
    if not events:
        return {}
    ids = sorted({letter_id for event in events for letter_id in event.letter_ids})
    held = list(visible(user, DeadLetter.objects.filter(id__in=ids, state=LetterState.HELD))
                .order_by("id").values_list("id", flat=True))
    job_kind = kind(job.kind)
    retry = job_kind.name if held and SELECTION in job_kind.offered_on and has(user, job_kind.permission) else ""
    params = [(ask.name, job.params[ask.name]) for ask in job_kind.asks
              if not ask.at_confirm and job.params.get(ask.name) not in (None, "")]
    return {"failed_events": events, "retry_kind": retry, "retry_ids": held, "retry_params": params}


def _control(request, job_id: int, name: str):
    return act_on_job(request, job_id, *CONTROLS[name])


@login_required
@require_POST
def job_pause(request, job_id: int):
    return _control(request, job_id, "pause")


@login_required
@require_POST
def job_resume(request, job_id: int):
    return _control(request, job_id, "resume")


@login_required
@require_POST
def job_cancel(request, job_id: int):
    return _control(request, job_id, "cancel")
