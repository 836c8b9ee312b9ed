"""manage.py pipeline archive|groups|analytics|retention|replay: run a pipeline job on Spark.

Spark runs ``local[*]`` in this process (``DLO_SPARK_MASTER`` to change it); the lake is
DLO_LAKE_URL (default var/lake) unless ``--lake`` names another. For a cluster, run the same
jobs with ``spark-submit console/pipeline/submit.py <job> ...``.
"""

from __future__ import annotations

from django.core.management.base import CommandError

from console.management.cli import ActorCommand, printable
from console.models import Job
from console.wording import counted


class Command(ActorCommand):
    help = "Run a pipeline job on Spark: archive, groups, analytics, retention or replay (from the archive)."

    def add_arguments(self, parser) -> None:
        super().add_arguments(parser)
        parser.add_argument("job", choices=["archive", "groups", "analytics", "retention", "replay"])
        parser.add_argument("--lake", default=None, help="Lake URL or folder (default: DLO_LAKE_URL)")
        parser.add_argument("--days", type=int, default=None, help="retention: N days (default DLO_RETENTION_DAYS)")
        replay = parser.add_argument_group("replay")
        replay.add_argument("--since", help="First day (YYYY-MM-DD, UTC)")
        replay.add_argument("--until", help="Last day, included")
        replay.add_argument("--origin", default="", help="Origin subscription (queue) the letters died in")
        replay.add_argument("--exception", default="", help="Exception type")
        replay.add_argument("--group", default="", help="Failure group (fingerprint)")
        replay.add_argument("--rate", type=int, default=None, help="Letters per second")
        replay.add_argument("--reason", default="", help="Why (kept in the audit; required for replay)")
        replay.add_argument("--ticket", default="")
        replay.add_argument("--queue", action="store_true",
                            help="Queue the replay for the Celery worker instead of running it here")

    def handle(self, *args, **options) -> None:
        job = options["job"]
        if job == "archive":
            from console.pipeline.archive import archive

            added = archive(options["lake"])
            self.stdout.write("archived: " + ", ".join(f"{name} +{count}" for name, count in added.items()))
        elif job == "groups":
            from console.pipeline.groups import run_groups

            self.stdout.write(f"failure groups (history): {run_groups(options['lake'])}")
        elif job == "analytics":
            from console.jobs.kinds import resolving
            from console.pipeline.analytics import run_analytics

            analysed = run_analytics(options["lake"], resolving=resolving())
            self.stdout.write(f"failure analytics: {counted(analysed, 'letter')}")
        elif job == "retention":
            from console.jobs.kinds import replays
            from console.pipeline.retention import run_retention

            report = run_retention(options["lake"], replays=replays(), days=options["days"])
            self.stdout.write(f"retention: {report.deleted} failure records deleted, {report.erased_in_custody} "
                              f"bodies erased in custody, {report.erased_in_lake} in the lake")
        else:
            self._replay(options)

    def _replay(self, options) -> None:
        from console.jobs.door.requests import request_job
        from console.jobs.door.runner import run_job
        from console.services.jobs import JobError

        try:
            job = request_job(
                "archive_replay", actor=self.actor(options), reason=options["reason"], ticket=options["ticket"],
                lake=options["lake"], since=options["since"], until=options["until"], origin=options["origin"],
                exception=options["exception"], fingerprint=options["group"], rate_limit=options["rate"],
                run_here=not options["queue"],
            )
        except JobError as exc:
            raise CommandError(str(exc)) from None
        if job.status == Job.Status.AWAITING_APPROVAL:
            self.stdout.write(f"job {job.pk} waits for a second person's approval "
                              f"({printable(job.log[-1]['message'])}); once approved, a worker runs it")
            return
        if options["queue"]:
            self.stdout.write(f"job {job.pk} queued: replay from the archive (a worker runs it)")
            return
        run_job(job.pk)
        job = Job.objects.get(pk=job.pk)
        last = job.log[-1]["message"] if job.log else ""
        self.stdout.write(f"job {job.pk} {job.status}: {printable(last)}")
        if job.status != Job.Status.SUCCEEDED:
            raise CommandError(f"job {job.pk} {job.status}: {printable(job.error) or 'see its log'}")
