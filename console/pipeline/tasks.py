"""Celery beat's pipeline tasks (schedules in settings.CELERY_BEAT_SCHEDULE). Spark is imported
only when one runs, in the worker that runs it."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="console.pipeline.archive")
def archive() -> dict:
    from console.pipeline.archive import archive as run

    return run()


@shared_task(name="console.pipeline.groups")
def groups() -> int:
    from console.pipeline.groups import run_groups

    return run_groups()


@shared_task(name="console.pipeline.analytics")
def analytics() -> int:
    from console.pipeline.analytics import run_analytics

    return run_analytics()


@shared_task(name="console.pipeline.retention")
def retention() -> dict:
    from dataclasses import asdict

    from console.pipeline.retention import run_retention

    return asdict(run_retention())
