"""The operator's path through the services, as the tests take it: discover, then capture,
replay, move, purge or mark failed as jobs run to their end by the job runner (the same code
the Celery worker runs)."""

from __future__ import annotations

import threading

from django.db import connections

from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import DeadLetter, DeadPlace, Job
from console.services.brokers import do_discover


def discovered(broker, operator, name: str, scope: str = "") -> DeadPlace:
    """The place discovery found with this name and scope (it also finds other tests' places)."""
    (place,) = [p for p in do_discover(broker, actor=operator) if p.name == name and p.scope == scope]
    return place


def finished(job: Job) -> Job:
    """The job after running it to its end."""
    run_job(job.pk)
    return Job.objects.get(pk=job.pk)


class JobThread(threading.Thread):
    """Runs a job on a thread of its own, so the test can watch or disturb it meanwhile;
    ``outcome`` holds the job's status once the thread is done."""

    def __init__(self, job_id: int) -> None:
        super().__init__(name=f"job-{job_id}")
        self.job_id = job_id
        self.outcome: list[str] = []

    def run(self) -> None:
        try:
            self.outcome.append(run_job(self.job_id))
        finally:
            connections.close_all()


def capture(place: DeadPlace, operator, **kw) -> Job:
    return finished(request_job("capture", place=place, actor=operator, reason="triage", **kw))


def replay(operator, ids: list[int]) -> Job:
    return finished(request_job("replay", actor=operator, reason="bug fixed", ids=ids))


def move(operator, ids: list[int], target: str) -> Job:
    return finished(request_job("move", target=target, actor=operator, reason="park them", ids=ids))


def purge(operator, ids: list[int]) -> Job:
    return finished(request_job("purge", actor=operator, reason="personal data", ids=ids))


def mark_failed(operator, ids: list[int]) -> Job:
    return finished(request_job("mark_failed", actor=operator, reason="cannot be fixed", ids=ids))


def letters_of(place: DeadPlace) -> list[DeadLetter]:
    """The place's letters in custody, in capture order."""
    return list(DeadLetter.objects.filter(place=place).order_by("id"))


def letters_from(origin: str) -> list[DeadLetter]:
    """Letters in custody from one origin queue (a shared DLQ holds other tests' too)."""
    return list(DeadLetter.objects.filter(origin_queue=origin).order_by("id"))


def keep(place: DeadPlace, operator) -> DeadPlace:
    """Turn keeping the place in custody on, as the place's page or PATCH /api/places/{id}/ does."""
    from console.services.keeping import do_keep

    return do_keep(place, True, actor=operator, reason="keep it in custody")


def in_custody_within(place: DeadPlace, body: bytes, seconds: float = 5.0) -> float:
    """Wait until a letter with this body is in custody from ``place`` (the keeper takes it);
    the seconds it took. Fails after ``seconds``."""
    import time

    started = time.monotonic()
    while not DeadLetter.objects.filter(place=place, body=body).exists():
        assert time.monotonic() - started < seconds, f"{body!r} not in custody within {seconds}s"
        time.sleep(0.05)
    return time.monotonic() - started
