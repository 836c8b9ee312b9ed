"""manage.py keep: run the keeper, which drains every dead place kept in custody (console.jobs.automation.keeper).

One keeper process keeps hundreds of places; run one beside the Celery worker (``make run``
does), or several for more room: they share the places between them, never two on one
place. SIGTERM or Ctrl-C stops it after the batches in hand are stored and acknowledged."""

from __future__ import annotations

import signal

from django.core.management.base import BaseCommand

from console.jobs.automation.keeper import Keeper
from console.tracing import telemetry


class Command(BaseCommand):
    help = "Drain every dead place kept in custody, continuously, until stopped."

    def add_arguments(self, parser) -> None:
        parser.add_argument("--threads", type=int, help="Places drained at once (DLO_KEEPER_THREADS)")
        parser.add_argument("--poll", type=float, help="Seconds between two looks (DLO_KEEPER_POLL_SECONDS)")

    def handle(self, *args, **options) -> None:
        telemetry.start("keeper")
        keeper = Keeper(threads=options["threads"], poll_seconds=options["poll"])
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: keeper.stop())
        keeper.run()
