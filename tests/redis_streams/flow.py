"""The operator's path through the services, as the tests take it: discover, capture, replay, move."""

from __future__ import annotations

from console.jobs.runner import run_job
from console.models import DeadPlace, Job
from console.services.brokers import do_discover
from console.services.jobs import do_capture, do_move, do_replay


def discovered(broker, operator, name: str, scope: str = "") -> DeadPlace:
    """The place discovery found with this name and scope (it also finds other tests' streams)."""
    (place,) = [p for p in do_discover(broker, actor=operator) if p.name == name and p.scope == scope]
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
