"""manage.py grant_role USER ROLE [--broker NAME ...] [--place BROKER:PLACE ...] [--clear-limits]:
give a user their role (viewer, operator, admin, or none); audited.

Limits fail closed: without --broker, --place or --clear-limits the user's limits stay as they
are, so changing a limited user's role never makes them unlimited by omission.
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError

from console.access.roles import ROLES, limits_of
from console.access.scope import OutOfScope
from console.management.cli import ActorCommand, broker_named, find_place, printable
from console.services.roles import do_change_access


class Command(ActorCommand):
    help = ("Make ROLE the user's one role. --broker/--place set the brokers and places they are limited to "
            "(replacing earlier limits); --clear-limits lifts every limit; with neither, limits are kept.")

    def add_arguments(self, parser) -> None:
        super().add_arguments(parser)
        parser.add_argument("user", help="Username")
        parser.add_argument("role", choices=[*ROLES, "none"], help="The role, or none to take every role away")
        parser.add_argument("--broker", action="append", default=[], metavar="NAME", help="Limit to this broker")
        parser.add_argument("--place", action="append", default=[], metavar="BROKER:PLACE",
                            help="Limit to this dead place")
        parser.add_argument("--clear-limits", action="store_true",
                            help="Lift every limit: the user sees and acts everywhere their role allows")
        parser.add_argument("--reason", default="", help="Why (audited)")

    def handle(self, *args, **options) -> None:
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"no user named {options['user']!r}")
        if options["clear_limits"] and (options["broker"] or options["place"]):
            raise CommandError("--clear-limits lifts every limit: give it without --broker or --place")
        brokers = [broker_named(name) for name in options["broker"]]
        places = [find_place(spec) for spec in options["place"]]
        role = "" if options["role"] == "none" else options["role"]
        actor, reason = self.actor(options), options["reason"]
        try:
            do_change_access(user, actor=actor, role=role, brokers=brokers, places=places,
                             clear_limits=options["clear_limits"], reason=reason)
        except OutOfScope as exc:
            raise CommandError(str(exc)) from None
        limits = limits_of(user)
        limited = f", limited to {', '.join(printable(label, 80) for label in limits)}" if limits else ""
        self.stdout.write(f"{user.get_username()} is now {role or 'without a role'}{limited}")
