"""Jobs: the list, one job's progress (polled by htmx until it ends), cancel."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseStopPolling

from console.models import Job
from console.services.jobs import JobError, do_cancel_job
from console.services.selection import arrived_since
from console.web.paging import page_before


@login_required
def job_list(request):
    page = page_before(Job.objects.select_related("place"), request.GET.get("before"))
    return render(request, "web/jobs.html", {"page": page})


@login_required
def job_detail(request, job_id: int):
    """The full page, or (for htmx) just the progress part: HTTP 286 stops polling once ended."""
    job = get_object_or_404(Job.objects.select_related("place", "place__broker"), pk=job_id)
    context = {"job": job}
    if request.htmx:
        response = render(request, "web/partials/job_progress.html", context)
        if job.is_finished:
            response.status_code = HttpResponseStopPolling.status_code
        return response
    # What the operator saw is what the job touches: say how many arrived since.
    context["arrived_since"] = arrived_since(job.selection) if job.kind != Job.Kind.CAPTURE else 0
    return render(request, "web/job.html", context)


@login_required
@require_POST
def job_cancel(request, job_id: int):
    job = get_object_or_404(Job, pk=job_id)
    try:
        do_cancel_job(job, actor=request.user, reason=request.POST.get("reason", "").strip())
    except JobError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Job {job.pk}: cancel requested.")
    return redirect("job", job.pk)
