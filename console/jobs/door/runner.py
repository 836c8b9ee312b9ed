"""Run one job to its end (or to a pause), whatever process calls it."""

from __future__ import annotations

import logging

from console.brokers import BrokerError
from console.jobs.control import Stop, claim, finish
from console.jobs.kinds import kind
from console.models import Job
from console.tracing import telemetry
from console.wording import counted

log = logging.getLogger(__name__)


def run_job(job_id: int) -> str:
    """Run the job under a span of its own (its id, kind, status and counts; its children: the
    statements, the replay batches) while the console's telemetry is on."""
    with telemetry.span("job", {"dlo.job.id": job_id}) as span:
        job = claim(job_id)
        if job is None:
            span.set_attribute("dlo.job.status", "not runnable")
            return "not runnable"
        span.update_name(f"job {job.kind}")  # a kind's name is the code's, never typed by people
        status: str = Job.Status.FAILED  # unless it ends otherwise
        try:
            status = _run(job)
            return status
        finally:
            telemetry.job_ended(span, job, status)


def _run(job: Job) -> str:
    job_id = job.pk
    try:
        summary = kind(job.kind).run(job)
    except Stop as stop:
        finish(job, stop.status, f"{stop.status} by request after {counted(job.done, 'letter')}")
        return stop.status
    except BrokerError as exc:
        finish(job, Job.Status.FAILED, f"failed: {exc.message}", error=exc.message)
        return Job.Status.FAILED
    except Exception as exc:
        log.exception("job %s failed", job_id)
        finish(job, Job.Status.FAILED, "failed: internal error", error=f"{type(exc).__name__}: {exc}")
        raise
    status = outcome(Job.objects.values_list("done", "failed").get(pk=job_id))
    finish(job, status, summary)
    return status


def outcome(counts: tuple[int, int]) -> str:
    """How a job that ran to its end ended, from (done, failed): ``succeeded`` only when no
    letter failed; ``partly failed`` when some did and some did not; ``failed`` when none was
    done. The job page, ``/jobs/``, the API, the audit and the notifications all say this word."""
    done, failed = counts
    if not failed:
        return Job.Status.SUCCEEDED
    return Job.Status.PARTLY_FAILED if done else Job.Status.FAILED
