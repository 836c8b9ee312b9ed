"""Job kinds: one module per kind of job, as console.brokers has one package per broker kind.

Each module defines a :class:`~console.jobs.kinds.base.JobKind`: the kind's typed parameters
and their validation, what a request for it touches (its plan: letters, places, targets), the
permission it needs, and its runner. Every job of every kind is requested through
console.jobs.door.requests.request_job and run by console.jobs.door.runner. Adding a kind means adding a
module here, a line below and a value in ``Job.Kind``.
"""

from __future__ import annotations

from functools import cache
from importlib import import_module

from console.jobs.kinds.base import JobKind, Plan
from console.services.jobs import JobError

#: kind -> dotted path of its JobKind class, imported on first use.
KINDS = {
    "capture": "console.jobs.kinds.capture.Capture",
    "shovel": "console.jobs.kinds.shovel.Shovel",
    "replay": "console.jobs.kinds.replay.Replay",
    "move": "console.jobs.kinds.move.Move",
    "purge": "console.jobs.kinds.purge.Purge",
    "mark_failed": "console.jobs.kinds.mark_failed.MarkFailed",
    "edit_replay": "console.jobs.kinds.edit_replay.EditReplay",
    "archive_replay": "console.jobs.kinds.archive_replay.ArchiveReplay",
    "keep": "console.jobs.kinds.keep.Keep",
}


@cache
def kind(name: str) -> JobKind:
    """The kind called ``name``; JobError for a kind the console does not know."""
    if name not in KINDS:
        raise JobError(f"unknown kind of job {name!r}; known: {', '.join(KINDS)}")
    module, _, cls = KINDS[name].rpartition(".")
    return getattr(import_module(module), cls)()


__all__ = ["KINDS", "JobKind", "Plan", "kind"]
