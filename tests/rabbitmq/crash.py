"""Killing a real worker in the middle of a job, again and again, for the crash-safety tests.

A worker killed with SIGKILL leaves its job ``running`` with a heartbeat that stops moving.
The job comes back the way it does in production: a fresh worker is started, and once the
heartbeat is older than DLO_JOB_STALE_SECONDS, Celery beat's ``resume_stale_jobs`` queues it
again and the worker's ``claim`` takes it over from its cursor.
"""

from __future__ import annotations

import os
import random
import time
from dataclasses import dataclass, field

from django.utils import timezone

from console.jobs.control import is_stale
from console.jobs.periodic import resume_stale_jobs
from console.models import Job
from tests.workers import Worker

#: Short, so that a killed job is seen dead within a second or two (the worker gets the same).
STALE_SECONDS = 1
BATCH_SIZE = 200
KILLS = 10
#: Seconds a claimed job may run before its worker is killed; the kills land before the first
#: batch, inside batches, between them and in the commit after a publish.
MAX_DELAY = 0.6
WAIT_SECONDS = 90
BODY_BYTES = 1024


def worker_settings() -> dict[str, str]:
    """The environment of the workers these tests kill."""
    return {"DLO_JOB_STALE_SECONDS": str(STALE_SECONDS), "DLO_BATCH_SIZE": str(BATCH_SIZE)}


def numbered(first: int, count: int) -> list[tuple[bytes, dict]]:
    """``count`` messages of about 1 KiB, each naming its number in its body and message id."""
    messages = []
    for number in range(first, first + count):
        mid = message_id(number)
        body = f'{{"letter": "{mid}", "pad": "'.encode()
        body += b"x" * (BODY_BYTES - len(body) - 2) + b'"}'
        messages.append((body, {"message_id": mid, "delivery_mode": 2}))
    return messages


def message_id(number: int) -> str:
    return f"letter-{number:06d}"


def dead_queue(kit) -> tuple[str, str]:
    """A work queue that dead-letters into its ``.dlq`` (the letters' origin, for a replay)."""
    dlq = kit.queue(kit.name("crash") + ".dlq")
    work = kit.queue(kit.name("crash"), {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})
    return work, dlq


def kill_letters(kit, work: str, dlq: str, first: int, count: int) -> None:
    """Numbered messages published to the work queue and rejected by its consumer into the DLQ,
    so they carry the ``x-death`` a real dead letter carries."""
    before = kit.depth(dlq)
    kit.publish_many(work, numbered(first, count))
    kit.reject_all(work, count)
    kit.wait_depth(dlq, before + count)


@dataclass
class Killer:
    """Kills the worker at random moments of a job and brings the job back each time.

    The seed makes the delays reproducible: set DLO_CRASH_SEED to replay a failing run.
    """

    worker: Worker
    seed: int = field(default_factory=lambda: int(os.environ.get("DLO_CRASH_SEED") or random.randrange(2**32)))
    kills: list[str] = field(default_factory=list)
    landed: int = 0

    def __post_init__(self) -> None:
        self.random = random.Random(self.seed)

    def kill_during(self, job: Job, wanted: int) -> int:
        """Kill the worker up to ``wanted`` times while it runs ``job``; return how many kills
        landed mid-job (a kill after the job ended does not count, and ends the round).
        The job is left queued again in a fresh worker either way."""
        if not self.worker.alive():
            self.worker.start()
        since = job.created_at
        landed = 0
        while landed < wanted:
            self._wait_claimed(job, since)
            delay = self.random.uniform(0, MAX_DELAY)
            time.sleep(delay)
            self.worker.kill()
            job.refresh_from_db()
            self.worker.start()
            if job.is_finished:
                self.kills.append(f"kill after {delay:.3f}s came after the job ended")
                return landed
            landed += 1
            self.landed += 1
            self.kills.append(f"kill {self.landed}: {delay:.3f}s after the claim, at done={job.done}")
            self._wait(lambda: is_stale(job) or job.is_finished, job, "its heartbeat to go stale")
            since = timezone.now()
            assert job.pk in resume_stale_jobs(), self.explain(job, "resume_stale_jobs did not requeue the job")
        return landed

    def finish(self, job: Job) -> Job:
        """Let the job run to its end in a live worker."""
        if not self.worker.alive():
            self.worker.start()
        self._wait(lambda: job.is_finished, job, "the job to end")
        return job

    def _wait_claimed(self, job: Job, since) -> None:
        """Until a worker has claimed the job (running, heartbeat newer than its requeue)."""
        self._wait(lambda: job.is_finished or (job.status == Job.Status.RUNNING and job.heartbeat_at
                                               and job.heartbeat_at >= since), job, "a worker to claim the job")

    def _wait(self, condition, job: Job, what: str) -> None:
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            job.refresh_from_db()
            if condition():
                return
            if time.monotonic() > deadline:
                raise AssertionError(self.explain(job, f"waited {WAIT_SECONDS}s for {what}"))
            time.sleep(0.05)

    def explain(self, job: Job, problem: str) -> str:
        """A failure message that lets the run be reproduced."""
        job.refresh_from_db()
        return (f"{problem}; seed {self.seed} (rerun with DLO_CRASH_SEED={self.seed}); job {job.pk} "
                f"{job.status} done={job.done} failed={job.failed} error={job.error!r}\n"
                + "\n".join(self.kills) + "\njob log:\n" + "\n".join(f"  {line['at']} {line['message']}" for line in job.log)
                + f"\nworker log:\n{self.worker.log()}")
