"""``manage.py mcp --token-file FILE``: the MCP server for a desktop agent, over stdio, acting as
the account whose API token (a DRF token, or the identity provider's bearer token with
``--bearer``) the file holds: what that account may see and do through the API, and no more
(console.agents). The session's calls are audited when it ends (``mcp.session``)."""

from __future__ import annotations

from pathlib import Path

import anyio
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from console.agents.accounts import account_of
from console.agents.api import Api, ApiRefused
from console.agents.server import Session, build
from console.services import audit


class Command(BaseCommand):
    help = "Serve the MCP server over stdio as the account of an API token (console.agents)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--token-file", required=True, help="A file holding the API token")
        parser.add_argument("--bearer", action="store_true",
                            help="The file holds the identity provider's access token, not a DRF token")

    def handle(self, *args, token_file: str, bearer: bool, **options) -> None:
        try:
            secret = Path(token_file).read_text().strip()
        except OSError as exc:
            raise CommandError(f"cannot read the token file: {exc}") from None
        if not secret or any(c.isspace() for c in secret):
            raise CommandError("the token file must hold one token")
        api = Api(f"{'Bearer' if bearer else 'Token'} {secret}")
        try:
            api.get("/api/tokens/")  # any signed-in call: the token is checked before the agent starts
        except ApiRefused as exc:
            raise CommandError(f"the console refuses this token ({exc.status}): {exc.detail}") from None
        session = Session()
        try:
            anyio.run(build(api, session).run_stdio_async)
        finally:
            _audited(api, session)


def _audited(api: Api, session: Session) -> None:
    """One audit row for the session's reading (not one per call), as the token's account."""
    if not session.calls:
        return
    account = account_of(api.authorization)
    if account is None:
        return
    with transaction.atomic():
        audit.record("mcp.session", actor=account, target="stdio", count=sum(session.calls.values()),
                     details={"via": "mcp", "calls": dict(session.calls), "refused": dict(session.refused)})
