"""The console's steps, through the services and the job runner, as a user would take them."""

from __future__ import annotations

from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import DeadLetter, DeadPlace, Job
from console.services.brokers import do_discover


def discover_place(broker, source, actor="tests") -> DeadPlace:
    """Discover the broker's dead places and return the one for this test's consumer."""
    places = do_discover(broker, actor=actor)
    (place,) = [p for p in places if (p.scope, p.name) == (source.stream, source.consumer)]
    return place


def capture(place: DeadPlace, actor="tests") -> Job:
    job = request_job("capture", place=place, actor=actor, reason="triage")
    assert run_job(job.pk) == "succeeded"
    return Job.objects.get(pk=job.pk)


def replay(letters, actor="tests") -> Job:
    job = request_job("replay", actor=actor, reason="fixed the consumer", ids=[letter.id for letter in letters])
    assert run_job(job.pk) == "succeeded"
    return Job.objects.get(pk=job.pk)


def letters_of(place: DeadPlace) -> list[DeadLetter]:
    return list(DeadLetter.objects.filter(place=place).order_by("id"))
