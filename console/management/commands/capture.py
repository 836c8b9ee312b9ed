"""manage.py capture PLACE --reason R [--limit N] [--wait]: take a dead place into custody."""

from __future__ import annotations

from django.core.management.base import CommandError

from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.management.cli import ActorCommand, find_place, printable, wait_for_job
from console.models import Job
from console.services.jobs import JobError


class Command(ActorCommand):
    help = (
        "Capture the messages of a dead place (PLACE is an id, broker:queue or broker:vhost/queue). "
        "The job is queued for the Celery worker; --wait runs it here and waits for its end."
    )

    def add_arguments(self, parser) -> None:
        super().add_arguments(parser)
        parser.add_argument("place", metavar="PLACE")
        parser.add_argument("--reason", required=True, help="Why (kept in the audit)")
        parser.add_argument("--limit", type=int, default=None, help="Capture at most N letters")
        parser.add_argument("--wait", action="store_true", help="Run the job in this process")

    def handle(self, *args, **options) -> None:
        place = find_place(options["place"])
        try:
            job = request_job("capture", place=place, actor=self.actor(options), reason=options["reason"],
                              limit=options["limit"])
        except JobError as exc:
            raise CommandError(str(exc)) from None
        if not options["wait"]:
            self.stdout.write(f"job {job.pk} queued: capture from {printable(place)} (a worker runs it)")
            return
        if run_job(job.pk) == "not runnable":
            # A worker claimed the queued job first; follow its progress instead.
            self.stdout.write(f"job {job.pk} is being run by a worker; waiting for it")
        job = wait_for_job(job.pk)
        last = job.log[-1]["message"] if job.log else ""
        self.stdout.write(f"job {job.pk} {job.status}: {job.done} captured, {job.failed} failed. {printable(last)}")
        if job.status != Job.Status.SUCCEEDED:
            raise CommandError(f"job {job.pk} {job.status}: {printable(job.error) or 'see its log'}")
