"""Every job reaches the worker through the door's one enqueue (console.jobs.door.queueing): a
request, an approval, a resume and the sweep of stale jobs alike. No other module sends the
run_job task, and a job whose task message was lost is sent again the way a request sends it,
once its transaction commits."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from console.brokers.memory.adapter import Message
from console.jobs import tasks
from console.jobs.automation.periodic import resume_stale_jobs
from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import DeadLetter, Job
from console.services.brokers import do_discover

CONSOLE = Path(__file__).resolve().parents[2] / "console"


def test_only_the_tasks_module_names_the_run_job_task():
    sends = ("run_job.delay", "run_job.apply_async", '"console.run_job"', "'console.run_job'")
    offenders = [str(path.relative_to(CONSOLE)) for path in CONSOLE.rglob("*.py")
                 if path.name != "tasks.py" and any(send in path.read_text() for send in sends)]
    assert offenders == []


@pytest.mark.django_db
def test_a_lost_job_is_sent_again_through_the_door(memory_broker, operator, monkeypatch,
                                                     django_capture_on_commit_callbacks):
    fake, broker = memory_broker
    fake.queue("orders")
    fake.queue("orders.dlq").append(Message(b"1", {"x-origin-queue": "orders"}))
    (place,) = do_discover(broker, actor=operator)
    run_job(request_job("capture", place=place, actor=operator, reason="triage").pk)
    sent: list[int] = []
    monkeypatch.setattr(tasks.run_job, "delay", sent.append)

    with django_capture_on_commit_callbacks(execute=True):
        job = request_job("replay", actor=operator, reason="fixed", ids=[DeadLetter.objects.get().pk])
    assert sent == [job.pk]

    Job.objects.filter(pk=job.pk).update(created_at=timezone.now() - timedelta(hours=1))  # its message was lost
    with django_capture_on_commit_callbacks(execute=False) as waiting:
        assert resume_stale_jobs() == [job.pk]
    assert sent == [job.pk]  # not before the sweep's transaction commits
    for callback in waiting:
        callback()
    assert sent == [job.pk, job.pk]
