"""Mark failed: give letters up for good [SAP's FAIL]; they are kept for the retention period
and never replayed (console.jobs.engines.local)."""

from __future__ import annotations

from typing import Any

from console.jobs.engines.local import run_local
from console.jobs.kinds.base import LETTER, SELECTION, NoParams
from console.jobs.kinds.letters import LettersKind
from console.models import Job, LetterState


class MarkFailed(LettersKind[NoParams]):
    name = "mark_failed"
    action_label = "Mark failed"
    offered_on = frozenset({SELECTION, LETTER})
    resolves = ("failed", LetterState.FAILED)
    transition: tuple[tuple[str, ...], str, dict[str, Any]] = ((LetterState.HELD,), LetterState.FAILED, {})

    def run(self, job: Job) -> str:
        return run_local(job, *self.transition)
