"""manage.py grant_role USER ROLE [--broker NAME ...] [--place BROKER:PLACE ...]: give a user
their role (viewer, operator, admin, or none), optionally limited to brokers or places; audited."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.core.management.base import CommandError
from django.db import transaction

from console.access.roles import ROLES, do_grant_role
from console.management.cli import ActorCommand, broker_named, find_place
from console.models import RoleScope
from console.services import audit


class Command(ActorCommand):
    help = "Make ROLE the user's one role; --broker/--place limit them to those (replacing any earlier limits)."

    def add_arguments(self, parser) -> None:
        super().add_arguments(parser)
        parser.add_argument("user", help="Username")
        parser.add_argument("role", choices=[*ROLES, "none"], help="The role, or none to take every role away")
        parser.add_argument("--broker", action="append", default=[], metavar="NAME", help="Limit to this broker")
        parser.add_argument("--place", action="append", default=[], metavar="BROKER:PLACE",
                            help="Limit to this dead place")
        parser.add_argument("--reason", default="", help="Why (audited)")

    def handle(self, *args, **options) -> None:
        user = get_user_model().objects.filter(username=options["user"]).first()
        if user is None:
            raise CommandError(f"no user named {options['user']!r}")
        brokers = [broker_named(name) for name in options["broker"]]
        places = [find_place(spec) for spec in options["place"]]
        role = "" if options["role"] == "none" else options["role"]
        with transaction.atomic():
            do_grant_role(user, role, actor=self.actor(options), reason=options["reason"])
            had_limits, _ = RoleScope.objects.filter(user=user).delete()
            RoleScope.objects.bulk_create([RoleScope(user=user, broker=b) for b in brokers]
                                          + [RoleScope(user=user, place=p) for p in places])
            if brokers or places or had_limits:
                audit.record("grant_scope", actor=self.actor(options), reason=options["reason"],
                             target=user.get_username(),
                             details={"brokers": [b.name for b in brokers], "places": [str(p) for p in places]})
        limited = f", limited to {', '.join([*map(str, brokers), *map(str, places)])}" if brokers or places else ""
        self.stdout.write(f"{user.get_username()} is now {role or 'without a role'}{limited}")
