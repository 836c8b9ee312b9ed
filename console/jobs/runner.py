"""Run one job to its end (or to a pause), whatever process calls it."""

from __future__ import annotations

import logging

from console.brokers import BrokerError
from console.jobs.capture import run_capture
from console.jobs.control import Stop, claim, finish
from console.jobs.local import run_local
from console.jobs.publish import run_publish
from console.jobs.shovel import run_shovel
from console.models import Job
from console.pipeline.jobs import run_archive_replay

log = logging.getLogger(__name__)

RUNNERS = {
    Job.Kind.CAPTURE: run_capture,
    Job.Kind.REPLAY: run_publish,
    Job.Kind.MOVE: run_publish,
    Job.Kind.PURGE: run_local,
    Job.Kind.MARK_FAILED: run_local,
    Job.Kind.ARCHIVE_REPLAY: run_archive_replay,
    Job.Kind.SHOVEL: run_shovel,
}


def run_job(job_id: int) -> str:
    job = claim(job_id)
    if job is None:
        return "not runnable"
    try:
        summary = RUNNERS[job.kind](job)
    except Stop as stop:
        finish(job, stop.status, f"{stop.status} by request after {job.done} letters")
        return stop.status
    except BrokerError as exc:
        finish(job, Job.Status.FAILED, f"failed: {exc.message}", error=exc.message)
        return Job.Status.FAILED
    except Exception as exc:
        log.exception("job %s failed", job_id)
        finish(job, Job.Status.FAILED, "failed: internal error", error=f"{type(exc).__name__}: {exc}")
        raise
    finish(job, Job.Status.SUCCEEDED, summary)
    return Job.Status.SUCCEEDED
