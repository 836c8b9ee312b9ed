"""One operator action on one job, as the job page's buttons post it."""

from __future__ import annotations

from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect

from console.models import Job
from console.services.jobs import JobError


def act_on_job(request, job_id: int, service, done: str, refused=JobError):
    """Run one audited service on a job with the operator's reason, say how it went on the
    job's page. ``done`` is the success message, with ``{pk}`` for the job's id."""
    job = get_object_or_404(Job, pk=job_id)
    try:
        service(job, actor=request.user, reason=request.POST.get("reason", "").strip())
    except refused as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, done.format(pk=job.pk))
    return redirect("job", job.pk)
