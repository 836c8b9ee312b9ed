"""manage.py demo: the demo account and demo letters (idempotent: a second run adds nothing).

With a RabbitMQ on localhost (guest/guest, management API on 15672), the letters die there for
real and are captured through the console's own services, so replay works. Without one, a
memory broker holds them: browsing works, replay needs a real broker.

With ``--analytics`` it then runs the pipeline's ``groups`` and ``analytics`` jobs on Spark once
(needs Java 17), unless analytics were computed before, so the history and analytics pages
have figures from the first minute rather than after Celery beat's first hourly run. With
``--analytics-later`` (``make run``) it queues them for the worker instead and ends at once: the
console answers first, and the Analytics page says they are being computed until they are.
"""

from __future__ import annotations

import logging
import shutil
from contextlib import contextmanager
from urllib.parse import unquote, urlsplit

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db.models import Sum
from rest_framework.authtoken.models import Token

from console.access.roles import set_role
from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.management.cli import ActorCommand, printable
from console.management.demo import memory, rabbitmq
from console.management.demo.catalogue import DEAD_LETTER_QUEUES, dead_letter_count, messages
from console.models import Broker, DeadLetter, DeadPlace, OutcomeStat
from console.pipeline.spark_log import log_file
from console.services.analytics import ask_for_analytics
from console.services.brokers import do_add_broker, do_discover
from console.services.jobs import JobError
from console.wording import counted

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "dead-letters-demo"
# Purges and large jobs need a second person's approval: this one can give it for every job the
# demo user may ask for. An admin, since only an admin approves a purge (console.jobs.door.approvals).
REVIEWER_USERNAME = "demo-reviewer"
RABBIT_BROKER = "local-rabbit"


@contextmanager
def quiet(*names: str):
    """Silence the clients' per-request logging while probing for a broker."""
    loggers = [logging.getLogger(name) for name in names]
    levels = [logger.level for logger in loggers]
    for logger in loggers:
        logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        for logger, level in zip(loggers, levels, strict=True):
            logger.setLevel(level)


class Command(ActorCommand):
    help = "Create the demo user (demo / dead-letters-demo) and demo dead letters."

    def add_arguments(self, parser) -> None:
        super().add_arguments(parser)
        parser.add_argument("--rabbitmq-url", default="amqp://guest:guest@127.0.0.1:5672/")
        parser.add_argument("--management-url", default="http://guest:guest@127.0.0.1:15672/")
        parser.add_argument("--no-rabbitmq", action="store_true", help="Use the memory broker even if RabbitMQ answers")
        parser.add_argument("--analytics", action="store_true",
                            help="Then compute the failure groups and analytics once on Spark (needs Java 17), "
                                 "unless they were computed before")
        parser.add_argument("--analytics-later", action="store_true",
                            help="As --analytics, but on the Celery worker once it runs: the command ends at once "
                                 "(make run: the console answers first, and the Analytics page fills in by itself)")

    def handle(self, *args, **options) -> None:
        with quiet("httpx"):
            self._handle(options)

    def _handle(self, options) -> None:
        actor = self.actor(options)
        user, token = self._user()
        if not options["no_rabbitmq"] and self._rabbit_answers(options):
            if retired := memory.retire(actor=actor):
                self.stdout.write(f"RabbitMQ answers now: the memory broker {memory.BROKER_NAME!r} of an earlier "
                                  f"start went, with its copy of the demo letters ({retired})")
            self._rabbitmq(options, actor)
        else:
            broker, stored = memory.install(actor=actor)
            self.stdout.write(f"no RabbitMQ on localhost: demo letters kept by the memory broker {broker.name!r} "
                              f"({stored} new). Browsing works; replay needs a real broker.")
        held = DeadLetter.objects.filter(place__name__in=DEAD_LETTER_QUEUES, place__gone=False).count()
        self.stdout.write(f"demo letters in custody: {held}")
        self.stdout.write(f"sign in as {user.username} / {DEMO_PASSWORD}   (API token: {token.key})")
        self.stdout.write(f"a second person, who approves what {user.username} asks for (purges included): "
                          f"{REVIEWER_USERNAME} / {DEMO_PASSWORD}")
        if options["analytics"] or options["analytics_later"]:
            self._analytics(later=options["analytics_later"])

    def _analytics(self, *, later: bool) -> None:
        """The pipeline's groups and analytics jobs, once: later, Celery beat runs them hourly."""
        if OutcomeStat.objects.exists():
            return
        if not settings.DLO_SPARK_REMOTE and shutil.which("java") is None:
            self.stdout.write("no Java on this machine: the analytics wait for Java 17 and the pipeline "
                              "(Celery beat runs it hourly)")
            return
        if later:
            from celery import chain

            from console.jobs import tasks

            ask_for_analytics()
            chain(tasks.groups.si(), tasks.analytics.si()).apply_async()
            self.stdout.write(f"the failure groups and analytics are computed once on Spark by the worker, in about "
                              f"half a minute (its log: {log_file()})")
            return
        # pyspark loads only when asked for: most runs of the demo need none of it.
        from console.jobs.kinds import resolving
        from console.pipeline.analytics import run_analytics
        from console.pipeline.groups import run_groups

        self.stdout.write(f"computing the failure groups and analytics once, on Spark (its log: {log_file()})")
        groups = run_groups()
        analysed = run_analytics(resolving=resolving())
        self.stdout.write(f"failure groups (history): {groups}; analytics: {counted(analysed, 'letter')}")

    def _user(self):
        user = self._account(DEMO_USERNAME, "admin")
        self._account(REVIEWER_USERNAME, "admin")
        token, _ = Token.objects.get_or_create(user=user)
        return user, token

    @staticmethod
    def _account(username: str, role: str):
        users = get_user_model()
        user = users.objects.filter(username=username).first() or users(username=username)
        user.set_password(DEMO_PASSWORD)  # the password printed must be the one that works
        user.save()
        set_role(user, role)
        return user

    @staticmethod
    def _rabbit_answers(options) -> bool:
        management = urlsplit(options["management_url"])
        clean = management._replace(netloc=management.hostname + (f":{management.port}" if management.port else ""))
        with quiet("aiormq", "aio_pika"):
            return rabbitmq.answers(options["rabbitmq_url"], clean.geturl(),
                                    management.username or "guest", management.password or "guest")

    def _rabbitmq(self, options, actor: str) -> None:
        url = options["rabbitmq_url"]
        vhost = unquote(urlsplit(url).path[1:]) or "/"
        in_custody = DeadLetter.objects.filter(
            broker__name=RABBIT_BROKER, place__name__in=DEAD_LETTER_QUEUES, place__scope__in=[vhost, ""]
        )
        waiting = sum(rabbitmq.dead_letter_depths(url).values())
        if not in_custody.exists() and waiting == 0:
            held = rabbitmq.make_letters_die(url)
            self.stdout.write(f"RabbitMQ: published {len(messages())} demo orders; the consumers rejected "
                              f"{dead_letter_count()} of them, so {counted(held, 'letter')} now wait in the DLQs")
        broker = Broker.objects.filter(name=RABBIT_BROKER).first()
        if broker is None:
            broker = do_add_broker(actor=actor, name=RABBIT_BROKER, kind="rabbitmq", url=url,
                                   management_url=options["management_url"])
            self.stdout.write(f"added broker {RABBIT_BROKER}")
        places = [p for p in do_discover(broker, actor=actor)
                  if p.name in DEAD_LETTER_QUEUES and (p.scope or "/") == vhost]
        for place in places:
            if not place.depth:
                continue
            try:
                job = request_job("capture", place=place, actor=actor,
                                  reason="demo: take the demo letters into custody")
            except JobError as exc:
                self.stderr.write(f"{printable(place)}: {exc}")
                continue
            run_job(job.pk)
            job.refresh_from_db()
            self.stdout.write(f"captured {counted(job.done, 'letter')} from {printable(place)} "
                              f"(job {job.pk} {job.status})")
        depth = DeadPlace.objects.filter(pk__in=[p.pk for p in places]).aggregate(total=Sum("depth"))["total"]
        self.stdout.write(f"RabbitMQ demo ready on broker {RABBIT_BROKER}; "
                          f"{counted(depth or 0, 'letter')} still on the broker")
