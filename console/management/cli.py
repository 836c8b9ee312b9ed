"""What the management commands share: who is acting, naming places, printing hostile text.

The commands are thin shells over console.services: they parse arguments, call one service
function with ``actor="cli:<os user>"`` (or ``--actor``), and print the outcome.
"""

from __future__ import annotations

import getpass
import os
import time

from django.core.management.base import BaseCommand, CommandError

from console.models import Broker, DeadPlace, Job


def os_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no passwd entry and no USER variable (some containers)
        return f"uid{os.getuid()}"


def printable(text: object, limit: int = 200) -> str:
    """Broker-supplied text as one safe terminal line: control characters escaped, length capped."""
    value = str(text)
    clipped = value[:limit] + ("…" if len(value) > limit else "")
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in clipped)


class ActorCommand(BaseCommand):
    """A command run as a console user (``--actor USERNAME``, whose role must allow it: see
    console.access.commands) or, without it, audited under ``cli:<os user>``."""

    def add_arguments(self, parser) -> None:
        parser.add_argument(
            "--actor", default=None, metavar="USERNAME",
            help="The console user acting; their role must allow this command (default: cli:<your os user>)",
        )

    def execute(self, *args, **options):
        from console.access.commands import acting_user

        command = type(self).__module__.rsplit(".", 1)[-1]
        self._acting = acting_user(command, options.get("actor"), os_user())
        return super().execute(*args, **options)

    def actor(self, options):
        """The User or ``cli:<os user>`` name the services record as acting."""
        return self._acting


def broker_named(name: str) -> Broker:
    try:
        return Broker.objects.get(name=name)
    except Broker.DoesNotExist:
        known = ", ".join(Broker.objects.values_list("name", flat=True)) or "none yet"
        raise CommandError(f"no broker named {name!r} (known: {known})") from None


def _spellings(place: DeadPlace) -> set[str]:
    """How an operator may write a place after ``broker:``: name, or scope/name."""
    names = {f"{place.scope}/{place.name}"} if place.scope else set()
    if place.scope.endswith("/"):  # RabbitMQ's default vhost is "/": accept "/name" too
        names.add(f"{place.scope.rstrip('/')}/{place.name}")
    return names


def find_place(spec: str) -> DeadPlace:
    """A dead place from ``<id>``, ``broker:queue`` or ``broker:scope/queue``."""
    if spec.isdigit():
        place = DeadPlace.objects.select_related("broker").filter(pk=int(spec)).first()
        if place is None:
            raise CommandError(f"no dead place with id {spec}")
        return place
    broker_name, sep, rest = spec.partition(":")
    if not sep or not rest:
        raise CommandError(f"{spec!r}: name a place as <id>, broker:queue or broker:vhost/queue")
    places = list(DeadPlace.objects.select_related("broker").filter(broker=broker_named(broker_name)))
    by_scope = [p for p in places if rest in _spellings(p)]
    if len(by_scope) == 1:
        return by_scope[0]
    by_name = [p for p in places if p.name == rest]
    if len(by_name) == 1:
        return by_name[0]
    if len(by_name) > 1:
        choices = ", ".join(printable(p) for p in by_name)
        raise CommandError(f"{spec!r} names several places ({choices}); add the vhost or use the id")
    raise CommandError(f"no dead place {spec!r}; run `manage.py discover {broker_name}` first?")


def wait_for_job(job_id: int, poll_seconds: float = 1.0) -> Job:
    """Poll a job run by another process (a worker) until it ends."""
    while True:
        job = Job.objects.get(pk=job_id)
        if job.is_finished:
            return job
        time.sleep(poll_seconds)
