"""The Celery tasks, on top of the jobs: each is a thin shell around the function it names.
The registered names (``console.run_job``...) are what the beat schedule and queued messages
use, so they stay the same when a module moves.

:func:`connect` hands the door (console.jobs.door.queueing) the ``run_job`` task, so the door
queues jobs without importing this module; Django's app registry calls it when ready
(console.apps)."""

from __future__ import annotations

import dataclasses
from typing import Any

from celery import Task, shared_task

from console.jobs import kinds
from console.jobs.automation import periodic, rules_at_work
from console.jobs.door import queueing, runner
from console.notifications import delivery
from console.services import group_counts, group_work, objectives, search_rows, view_subscriptions
from console.services.analytics import computing_analytics


@shared_task(name="console.run_job", acks_late=True, reject_on_worker_lost=True)
def run_job(job_id: int) -> str:
    return runner.run_job(job_id)


def connect() -> None:
    """Every job the door queues is sent to the worker as ``run_job``."""
    queueing.connect(run_job)


@shared_task(name="console.check_brokers")
def check_brokers() -> dict[str, bool]:
    return periodic.check_brokers()


@shared_task(name="console.discover_brokers")
def discover_brokers() -> dict[str, int | str]:
    return periodic.discover_brokers()


@shared_task(name="console.apply_rules")
def apply_rules() -> dict[str, int]:
    return rules_at_work.apply_rules()


@shared_task(name="console.reopen_groups")
def reopen_groups() -> list[str]:
    return group_work.reopen_groups()


@shared_task(name="console.evaluate_objectives")
def evaluate_objectives() -> list[str]:
    return [f"{objective.pk} {event}" for objective, event in objectives.evaluate_objectives()]


@shared_task(name="console.tell_view_digests")
def tell_view_digests() -> int:
    return view_subscriptions.tell_digests()


@shared_task(name="console.fill_search_rows")
def fill_search_rows() -> int:
    return search_rows.fill_search_rows()


@shared_task(name="console.fold_group_counts")
def fold_group_counts() -> int:
    return group_counts.fold()


@shared_task(name="console.sample_places")
def sample_places() -> int:
    return periodic.sample_places()


@shared_task(name="console.resume_stale_jobs")
def resume_stale_jobs() -> list[int]:
    return periodic.resume_stale_jobs()


@shared_task(name="console.expire_unapproved_jobs")
def expire_unapproved_jobs() -> list[int]:
    return periodic.expire_unapproved_jobs()


@shared_task(name="console.deliver", bind=True, max_retries=None)
def deliver(self: Task[[int], str], delivery_id: int) -> str:
    try:
        return delivery.deliver(delivery_id)
    except delivery.Failed as failed:
        raise self.retry(countdown=failed.countdown) from None


# The pipeline's tasks. Spark is imported only when one runs, in the worker that runs it; the
# kinds' declarations the pipeline reads are passed down from here (console.pipeline.outcomes).

@shared_task(name="console.pipeline.archive")
def archive() -> dict[str, int]:
    from console.pipeline.archive import archive as run

    return run()


@shared_task(name="console.pipeline.groups")
def groups() -> int:
    from console.pipeline.groups import run_groups

    return run_groups()


@shared_task(name="console.pipeline.analytics")
def analytics() -> int:
    from console.pipeline.analytics import run_analytics

    with computing_analytics():
        return run_analytics(resolving=kinds.resolving())


@shared_task(name="console.pipeline.retention")
def retention() -> dict[str, Any]:
    from console.pipeline.retention import run_retention

    return dataclasses.asdict(run_retention(replays=kinds.replays()))
