"""The operator's path through the services, as the tests take it: discover, capture, replay."""

from __future__ import annotations

from console.jobs.runner import run_job
from console.models import DeadLetter, DeadPlace, Job
from console.services.brokers import do_discover
from console.services.jobs import do_capture, do_move, do_replay


def discovered(broker, operator, name: str) -> DeadPlace:
    (place,) = [p for p in do_discover(broker, actor=operator) if p.name == name]
    return place


def finished(job: Job) -> Job:
    run_job(job.pk)
    return Job.objects.get(pk=job.pk)


def capture(place: DeadPlace, operator, **kw) -> Job:
    return finished(do_capture(place, actor=operator, reason="triage", **kw))


def replay(operator, ids: list[int]) -> Job:
    return finished(do_replay(actor=operator, reason="bug fixed", ids=ids))


def move(operator, ids: list[int], target: str) -> Job:
    return finished(do_move(target=target, actor=operator, reason="park them", ids=ids))


def letters_from(origin: str) -> list[DeadLetter]:
    """Letters in custody from one origin queue (the shared DLQ holds other tests' too)."""
    return list(DeadLetter.objects.filter(origin_queue=origin).order_by("id"))
