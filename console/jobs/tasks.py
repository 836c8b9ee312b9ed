"""Celery tasks. Each is a thin shell around console.jobs.door.runner."""

from __future__ import annotations

from celery import shared_task


@shared_task(name="console.run_job", acks_late=True, reject_on_worker_lost=True)
def run_job(job_id: int) -> str:
    from console.jobs.door.runner import run_job as run

    return run(job_id)


@shared_task(name="console.check_brokers")
def check_brokers() -> dict:
    from console.jobs.automation.periodic import check_brokers as check

    return check()


@shared_task(name="console.discover_brokers")
def discover_brokers() -> dict:
    from console.jobs.automation.periodic import discover_brokers as discover

    return discover()


@shared_task(name="console.apply_rules")
def apply_rules() -> dict:
    from console.jobs.automation.rules_at_work import apply_rules as apply

    return apply()


@shared_task(name="console.reopen_groups")
def reopen_groups() -> list:
    from console.services.group_work import reopen_groups as reopen

    return reopen()


@shared_task(name="console.fill_search_rows")
def fill_search_rows() -> int:
    from console.services.search_rows import fill_search_rows as fill

    return fill()


@shared_task(name="console.fold_group_counts")
def fold_group_counts() -> int:
    from console.services.group_counts import fold

    return fold()


@shared_task(name="console.sample_places")
def sample_places() -> int:
    from console.jobs.automation.periodic import sample_places as sample

    return sample()


@shared_task(name="console.resume_stale_jobs")
def resume_stale_jobs() -> list:
    from console.jobs.automation.periodic import resume_stale_jobs as resume

    return resume()


@shared_task(name="console.expire_unapproved_jobs")
def expire_unapproved_jobs() -> list:
    from console.jobs.automation.periodic import expire_unapproved_jobs as expire

    return expire()


@shared_task(name="console.deliver", bind=True, max_retries=None)
def deliver(self, delivery_id: int) -> str:
    from console.notifications.delivery import Failed
    from console.notifications.delivery import deliver as send

    try:
        return send(delivery_id)
    except Failed as failed:
        raise self.retry(countdown=failed.countdown) from None
