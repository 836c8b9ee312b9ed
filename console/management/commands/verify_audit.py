"""manage.py verify_audit: check the audit's hash chain; exit status 1 when it is broken."""

from __future__ import annotations

from django.core.management.base import CommandError

from console.management.cli import ActorCommand
from console.services.audit import verify_chain


class Command(ActorCommand):
    help = "Walk the audit's hash chain and name the first event that was changed, removed or inserted."

    def handle(self, *args, **options) -> None:
        report = verify_chain()
        if not report.ok:
            raise CommandError(
                f"audit chain broken at event {report.broken_at}: {report.problem} "
                f"({report.checked} events before it verified)"
            )
        self.stdout.write(f"audit chain verified: {report.checked} events")
