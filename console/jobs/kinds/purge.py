"""Purge: erase letters' bodies, keeping a tombstone with the envelope (console.jobs.engines.local).
Only an admin may ask for it or approve it, and it always waits for a second person."""

from __future__ import annotations

from typing import Any

from console.access.roles import PURGE
from console.jobs.engines.local import run_local
from console.jobs.kinds.base import LETTER, SELECTION, NoParams
from console.jobs.kinds.letters import LettersKind
from console.models import Job, LetterState


class Purge(LettersKind[NoParams]):
    name = "purge"
    permission = PURGE
    always_approved = True
    offered_on = frozenset({SELECTION, LETTER})
    cannot_be_undone = "A purge erases the bodies for good; the envelopes stay as tombstones."
    #: The states it acts on, the state it leaves, and the fields it changes besides.
    transition: tuple[tuple[str, ...], str, dict[str, Any]] = (
        (LetterState.HELD, LetterState.FAILED), LetterState.PURGED, {"body": b"", "body_erased": True})

    def run(self, job: Job) -> str:
        return run_local(job, *self.transition)
