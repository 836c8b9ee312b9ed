"""Mark failed: give letters up for good [SAP's FAIL]; they are kept for the retention period
and never replayed (console.jobs.engines.local)."""

from __future__ import annotations

from console.jobs.engines.local import run_local
from console.jobs.kinds.letters import LettersKind
from console.models import LetterState


class MarkFailed(LettersKind):
    name = "mark_failed"
    transition = ((LetterState.HELD,), LetterState.FAILED, {})

    def run(self, job) -> str:
        return run_local(job, *self.transition)
