"""The one way a job reaches the worker: :func:`enqueue` hands it over once the transaction
that queued it commits. Every path goes through here: a request approved at once
(console.jobs.door.requests), an approval (approvals), a resume (steering) and the sweep of
stale jobs (console.jobs.automation.periodic).

The door sits below the Celery tasks (console.jobs.tasks) and does not import them: the tasks
module connects its ``run_job`` task here when Django's app registry is ready (console.apps),
and the door calls what was connected. A kind that runs elsewhere (a keep job, in the keeper)
is not handed over: the keeper finds it by its status.
"""

from __future__ import annotations

from typing import Protocol

from django.db import transaction

from console.jobs.kinds import kind
from console.models import Job


class Worker(Protocol):
    """What the door needs of the worker: a way to send it a job's id (a Celery task's delay)."""

    def delay(self, job_id: int) -> object: ...


_worker: Worker | None = None


def connect(worker: Worker) -> None:
    """Name the worker that runs the queued jobs (console.jobs.tasks.run_job)."""
    global _worker
    _worker = worker


def enqueue(job: Job) -> None:
    """Hand ``job`` to the worker once the current transaction commits (at once outside one)."""
    if not kind(job.kind).in_worker:
        return
    worker = _worker
    if worker is None:
        raise RuntimeError("no worker is connected to the door: console.jobs.tasks.connect() runs at app ready")
    transaction.on_commit(lambda: worker.delay(job.pk))
