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
from collections import Counter

import aio_pika
from django.utils import timezone

from console.jobs.automation.periodic import resume_stale_jobs
from console.jobs.control import is_stale
from console.models import AuditEvent, DeadLetter, DeadPlace, Job, LetterState
from console.services.custody import REPLAY_ID_HEADER
from tests.workers import JobWatch, Worker

#: Short, so that a killed job is seen dead within a second or two (the worker gets the same).
STALE_SECONDS = 1
BATCH_SIZE = 200
KILLS = 10
#: Seconds a claimed job may run before its worker is killed, drawn at random: a few batches'
#: worth, so kills fall before the first batch, inside one, between two, and after the last.
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


def dead_queue(kit, *, durable: bool = False) -> tuple[str, str]:
    """A work queue that dead-letters into its ``.dlq`` (the letters' origin, for a replay)."""
    dlq = kit.queue(kit.name("crash") + ".dlq", durable=durable)
    work = kit.queue(kit.name("crash"), {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq},
                     durable=durable)
    return work, dlq


def dead_letter_numbered(kit, work: str, dlq: str, first: int, count: int, *, kept: bool = False) -> None:
    """Numbered messages published to the work queue and rejected by its consumer into the DLQ,
    so they carry the ``x-death`` a real dead letter carries. Waits until they are in the DLQ,
    unless a keeper reads it (``kept``): they are taken as they arrive."""
    before = kit.depth(dlq)
    kit.publish_many(work, [aio_pika.Message(body, **properties) for body, properties in numbered(first, count)])
    kit.reject_all(work, count)
    if not kept:
        kit.wait_depth(dlq, before + count)


def arrivals(kit, queue: str) -> list[tuple[str, str | None]]:
    """Take every message off the queue: (message id, replay id header) of each."""
    return [(m.message_id, m.headers.get(REPLAY_ID_HEADER)) for m in kit.drain(queue)]


def assert_replayed(place: DeadPlace, arrived: list[tuple[str, str | None]], *, allowed_duplicates: int,
                    explain) -> int:
    """What a user checks after a replay of the whole place: every letter ``replayed`` and
    audited once, every one on its origin queue, each copy under its own letter's replay id,
    and no more duplicates than allowed. Returns the number of duplicates."""
    letters = DeadLetter.objects.filter(place=place)
    replay_ids = dict(letters.values_list("message_id", "replay_id"))
    copies = {mid for mid, _ in arrived}
    duplicates = len(arrived) - len(copies)
    not_replayed = letters.exclude(state=LetterState.REPLAYED).count()
    assert not_replayed == 0, explain(f"{not_replayed} letters are not replayed")
    assert "" not in replay_ids.values(), explain("a replayed letter has no replay id")
    assert len(set(replay_ids.values())) == len(replay_ids), explain("two letters share a replay id")
    lost = sorted(set(replay_ids) - copies)
    assert not lost, explain(f"{len(lost)} letters never reached their origin queue, e.g. {lost[:5]}")
    strangers = sorted(copies - set(replay_ids))
    assert not strangers, explain(f"messages on the origin queue that are no letter: {strangers[:5]}")
    wrong = [(mid, rid) for mid, rid in arrived if rid != replay_ids[mid]]
    assert not wrong, explain(f"{len(wrong)} copies carry another replay id than their letter's: {wrong[:3]}")
    assert duplicates <= allowed_duplicates, explain(f"{duplicates} duplicates, more than {allowed_duplicates}")
    audited = Counter(i for ids in AuditEvent.objects.filter(action="replay", outcome="confirmed")
                      .values_list("letter_ids", flat=True) for i in ids)
    assert set(audited) == set(letters.values_list("id", flat=True)), explain("a replayed letter has no audit row")
    assert max(audited.values()) == 1, explain("a letter was audited as replayed twice")
    return duplicates


class Killer(JobWatch):
    """Kills the worker at random moments of a job and brings the job back each time.

    The seed makes the delays reproducible: set DLO_CRASH_SEED to replay a failing run.
    """

    def __init__(self, worker: Worker) -> None:
        super().__init__(worker, WAIT_SECONDS)
        self.seed = int(os.environ.get("DLO_CRASH_SEED") or random.randrange(2**32))
        self.random = random.Random(self.seed)
        self.kills: list[str] = []
        self.landed = 0

    def kill_during(self, job: Job, wanted: int, max_delay: float = MAX_DELAY) -> int:
        """Kill the worker up to ``wanted`` times while it runs ``job``, each time at most
        ``max_delay`` seconds after a worker claimed it; return how many kills landed mid-job
        (a kill after the job ended does not count, and ends the round). A worker is left
        running either way."""
        if not self.worker.alive():
            self.worker.start()
        since = job.created_at
        landed = 0
        while landed < wanted:
            # Claimed by a worker: running, with a heartbeat newer than the job's (re)queueing.
            self.wait(job, lambda: job.is_finished or (job.status == Job.Status.RUNNING and job.heartbeat_at
                                                       and job.heartbeat_at >= since),  # noqa: B023 - waited for here
                      "a worker to claim the job")
            delay = self.random.uniform(0, max_delay)
            time.sleep(delay)
            self.worker.kill()
            self.worker.start()  # it boots while the heartbeat goes stale
            # The row is read once the old heartbeat is stale, so that a commit the killed worker
            # sent just before dying is seen: a job that ended is not a job killed mid-way.
            self.wait(job, lambda: is_stale(job) or job.is_finished, "its heartbeat to go stale")
            if job.is_finished:
                self.kills.append(f"kill after {delay:.3f}s came after the job ended")
                return landed
            # Nobody told the row: it says running, and only its heartbeat stopped moving.
            assert job.status == Job.Status.RUNNING, self.explain(job, "a killed job is not left running")
            landed += 1
            self.landed += 1
            self.kills.append(f"kill {self.landed}: {delay:.3f}s after the claim, at done={job.done}")
            since = timezone.now()
            assert job.pk in resume_stale_jobs(), self.explain(job, "resume_stale_jobs did not requeue the job")
        return landed

    def explain(self, job: Job, problem: str) -> str:
        """The failure message names the seed, so that the run can be reproduced."""
        return super().explain(job, f"{problem}; seed {self.seed} (rerun with DLO_CRASH_SEED={self.seed})\n"
                                    + "\n".join(self.kills))
