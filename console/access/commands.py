"""Which management command needs which permission, and who is acting.

``--actor USERNAME`` names a console user: the command runs only if their role allows it, and
the audit names them. Without it the command acts as ``cli:<os user>``: whoever can run
manage.py on the server can read the database address and the encryption key anyway, so no
role could stop them; the audit still says who. ``DLO_CLI_REQUIRE_ACTOR=true`` makes
``--actor`` mandatory, for servers where manage.py is run through a wrapper.
"""

from __future__ import annotations

from django.conf import settings
from django.core.management.base import CommandError

from console.access.roles import ACT, MANAGE_BROKERS, MANAGE_USERS, PURGE, VIEW, has, user_named

#: Commands of this project -> the permission they need; None: no role applies (it runs
#: before there is a database to hold roles, or it is a service). tests/access checks every
#: command is listed.
COMMAND_PERMISSIONS: dict[str, str | None] = {
    "add_broker": MANAGE_BROKERS,
    "demo": MANAGE_BROKERS,
    "discover": ACT,
    "capture": ACT,
    # The pipeline's retention erases letters' bodies: as strong as a purge.
    "pipeline": PURGE,
    "verify_audit": VIEW,
    "roles": MANAGE_USERS,
    "grant_role": MANAGE_USERS,
    "embedded_postgres": None,
    # The keeper is a service, like the Celery worker: it acts as system:keeper on the places
    # people chose to keep (each choice audited with its person), never for whoever starts it.
    "keep": None,
    # The MCP server acts as the account of the API token it is given, through the API (every
    # call checked there), never as whoever starts it.
    "mcp": None,
}


def acting_user(command: str, actor: str | None, os_user: str):
    """The User (or the ``cli:`` name) a command acts as; CommandError when not allowed."""
    if command not in COMMAND_PERMISSIONS:
        raise CommandError(f"{command} is not in console.access.commands: it may not run until classified")
    needed = COMMAND_PERMISSIONS[command]
    if not actor:
        if needed is not None and getattr(settings, "DLO_CLI_REQUIRE_ACTOR", False):
            raise CommandError("--actor USERNAME is required on this server (DLO_CLI_REQUIRE_ACTOR)")
        return f"cli:{os_user}"
    user = user_named(actor)
    if user is None:
        raise CommandError(f"--actor {actor!r} is not an active user of the console")
    if needed is not None and not has(user, needed):
        raise CommandError(f"{actor} may not run {command}: their role lacks {needed}")
    return user
