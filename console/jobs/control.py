"""What every job loop shares: claiming the row, progress, pause/cancel, rate, broker waits."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TypeVar

from django.conf import settings
from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from console.brokers import BrokerError
from console.models import DeadPlace, Job
from console.notifications.events import notify

log = logging.getLogger(__name__)
T = TypeVar("T")


class Stop(Exception):
    """The job was asked to pause or cancel; raised between batches."""

    def __init__(self, status: str) -> None:
        super().__init__(status)
        self.status = status


def is_stale(job: Job) -> bool:
    """A running job whose worker has not been heard of for a while: it died."""
    if job.heartbeat_at is None:
        return True
    age = (timezone.now() - job.heartbeat_at).total_seconds()
    return age > settings.DLO_JOB_STALE_SECONDS


def claim(job_id: int) -> Job | None:
    """Mark the job running; None if it is finished, paused, waiting for approval, gone, or
    alive in another worker."""
    with transaction.atomic():
        job = Job.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.is_finished or job.status in (Job.Status.PAUSED, Job.Status.AWAITING_APPROVAL):
            return None
        if job.status in Job.IN_WORKER and not is_stale(job):
            return None
        if job.status != Job.Status.QUEUED:
            job.add_log("resumed after its worker stopped")
        job.status = Job.Status.RUNNING
        job.started_at = job.started_at or timezone.now()
        job.heartbeat_at = timezone.now()
        job.error = ""
        job.save()
        return job


def place_of(job: Job) -> DeadPlace:
    """The dead place a job acts on, with its broker (DoesNotExist for a job that names none)."""
    if job.place_id is None:
        raise DeadPlace.DoesNotExist(f"job {job.pk} names no dead place")
    return DeadPlace.objects.select_related("broker").get(pk=job.place_id)


def advance(job: Job, *, done: int = 0, failed: int = 0, skipped: int = 0, cursor: int | None = None) -> None:
    """Add to the counters (inside the caller's transaction when there is one)."""
    changes = {"done": F("done") + done, "failed": F("failed") + failed,
               "skipped": F("skipped") + skipped, "heartbeat_at": timezone.now()}
    if cursor is not None:
        changes["cursor"] = cursor
        job.cursor = cursor
    Job.objects.filter(pk=job.pk).update(**changes)
    job.done += done
    job.failed += failed
    job.skipped += skipped


def advance_many(done: dict[Job, int]) -> None:
    """Add each job's letters to its ``done``, in one statement for all (the keeper's takes)."""
    counted = {job: count for job, count in done.items() if count}
    if not counted:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {Job._meta.db_table} AS job SET done = job.done + counts.done, heartbeat_at = %s "
            "FROM unnest(%s::bigint[], %s::int[]) AS counts(id, done) WHERE job.id = counts.id",
            [timezone.now(), [job.pk for job in counted], list(counted.values())])
    for job, count in counted.items():
        job.done += count


def checkpoint(job: Job) -> None:
    """Between batches: stop if the operator paused or cancelled the job."""
    flags = Job.objects.filter(pk=job.pk).values("cancel_requested", "pause_requested").first()
    if flags is None or flags["cancel_requested"]:
        raise Stop(Job.Status.CANCELLED)
    if flags["pause_requested"]:
        raise Stop(Job.Status.PAUSED)


def finish(job: Job, status: str, message: str = "", error: str = "") -> None:
    with transaction.atomic():
        row = Job.objects.select_for_update().get(pk=job.pk)
        row.status = status
        if status != Job.Status.PAUSED:
            row.finished_at = timezone.now()
        row.pause_requested = False
        if error:
            row.error = error[:5000]
        if message:
            row.add_log(message)
        row.save()
        _tell(row, status)


#: A job's end -> the event that tells of it (a pause only when the job paused itself: its canary).
_ENDS: dict[str, str] = {
    Job.Status.SUCCEEDED: "job.finished", Job.Status.PARTLY_FAILED: "job.failed", Job.Status.FAILED: "job.failed",
    Job.Status.PAUSED: "job.paused",
}


def _tell(job: Job, status: str) -> None:
    event = _ENDS.get(status)
    if event is None or (status == Job.Status.PAUSED and not job.pause_reason):
        return
    notify(event, key=f"job:{job.pk}:{status}", place=job.place,
           subject=f"job {job.pk} ({job.get_kind_display().lower()}) {status}: {job.done} done, {job.failed} failed",
           details={"job": job.pk, "kind": job.kind, "reason": job.reason, "error": job.error,
                    "pause_reason": job.pause_reason})


def note(job: Job, message: str, *, status: str | None = None, error: str | None = None) -> None:
    with transaction.atomic():
        row = Job.objects.select_for_update().get(pk=job.pk)
        row.add_log(message)
        row.heartbeat_at = timezone.now()
        if status:
            row.status = status
        if error is not None:
            row.error = error[:5000]
        row.save()


class Throttle:
    """Keeps a job under its rate limit (letters per second); no limit, no sleeping."""

    def __init__(self, rate: int | None) -> None:
        self.rate = rate
        self.started = time.monotonic()
        self.count = 0

    def batch_size(self, default: int) -> int:
        return max(1, min(default, self.rate)) if self.rate else default

    def wait(self, count: int) -> None:
        self.count += count
        if not self.rate:
            return
        ahead = self.count / self.rate - (time.monotonic() - self.started)
        if ahead > 0:
            time.sleep(ahead)


def with_broker_retry(job: Job, action: Callable[[], T]) -> T:
    """Run a broker action; while the broker is unreachable, wait (status ``waiting``) and retry.

    A permanent error (bad credentials, missing queue) is raised at once. Waiting stops after
    DLO_BROKER_WAIT_SECONDS, or when the operator cancels or pauses the job.
    """
    limit = settings.DLO_BROKER_WAIT_SECONDS
    deadline = time.monotonic() + limit
    delay = 1.0
    while True:
        try:
            result = action()
        except BrokerError as exc:
            if exc.permanent or time.monotonic() + delay > deadline:
                raise
            log.warning("job %s: broker unavailable (%s); retrying in %.0fs", job.pk, exc.message, delay)
            note(job, f"broker unavailable, waiting: {exc.message}", status=Job.Status.WAITING, error=exc.message)
            job.status = Job.Status.WAITING
            time.sleep(delay)
            checkpoint(job)
            delay = min(delay * 2, 15.0)
            continue
        if job.status != Job.Status.RUNNING:
            note(job, "broker is back, going on", status=Job.Status.RUNNING, error="")
            job.status = Job.Status.RUNNING
        return result
