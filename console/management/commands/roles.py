"""manage.py roles: the console's users with their role and scope."""

from __future__ import annotations

from django.contrib.auth import get_user_model

from console.access.roles import ROLES, limits_of, role_of
from console.management.cli import ActorCommand, printable


class Command(ActorCommand):
    help = f"List the users with their role ({', '.join(ROLES)}) and the brokers or places they are limited to."

    def handle(self, *args, **options) -> None:
        for user in get_user_model().objects.order_by("username"):
            scopes = limits_of(user)
            where = f"  limited to {', '.join(printable(s, 80) for s in scopes)}" if scopes else ""
            active = "" if user.is_active else "  (inactive)"
            self.stdout.write(f"{printable(user.get_username(), 150)}: {role_of(user) or 'no role'}{where}{active}")
