"""Job kinds: one module per kind of job, as console.brokers has one package per broker kind.

Each module defines a :class:`~console.jobs.kinds.base.JobKind`: the kind's typed parameters
and their validation, what a request for it touches (its plan: letters, places, targets), the
permission it needs, its runner, and its surface (label, the pages that offer it, what it asks
for, where it publishes). Every job of every kind is requested through
console.jobs.door.requests.request_job and run by console.jobs.door.runner. Adding a kind means
adding a module here and a line below (or :func:`register` for a kind that lives elsewhere, a
test's own): ``Job.kind`` takes its choices from this registry (console.apps), so no migration.
The registry is console.kinds', as for every kind of thing.
"""

from __future__ import annotations

from typing import Any

from console.jobs.kinds.base import ORIGIN, JobKind, Plan
from console.kinds import Kinds, instance
from console.pipeline.outcomes import Replays, Resolving
from console.services.jobs import JobError

#: kind -> dotted path of its JobKind class (console.kinds), imported on first use. Action menus
#: list the kinds they offer in this order.
KINDS: Kinds[JobKind[Any]] = Kinds("kind of job", {
    "capture": "console.jobs.kinds.capture.Capture",
    "shovel": "console.jobs.kinds.shovel.Shovel",
    "replay": "console.jobs.kinds.replay.Replay",
    "move": "console.jobs.kinds.move.Move",
    "mark_failed": "console.jobs.kinds.mark_failed.MarkFailed",
    "purge": "console.jobs.kinds.purge.Purge",
    "edit_replay": "console.jobs.kinds.edit_replay.EditReplay",
    "archive_replay": "console.jobs.kinds.archive_replay.ArchiveReplay",
    "keep": "console.jobs.kinds.keep.Keep",
}, unknown=lambda name, known: JobError(f"unknown kind of job {name!r}; known: {', '.join(known)}"), make=instance)


def kind(name: str) -> JobKind[Any]:
    """The kind called ``name``; JobError for a kind the console does not know."""
    return KINDS.get(name)


def register(name: str, dotted: str) -> None:
    """Add the kind whose JobKind class ``dotted`` names (a kind living outside this package)."""
    KINDS.register(name, dotted)


def unregister(name: str) -> None:
    """Forget a kind :func:`register` added."""
    KINDS.unregister(name)


def all_kinds() -> list[JobKind[Any]]:
    """Every kind, in the registry's order."""
    return KINDS.all()


def replays() -> Replays:
    """The kinds that publish letters back to their origins and what the audit calls that:
    retention counts their jobs as the origins' activations (console.pipeline.retention)."""
    to_origins = [each for each in all_kinds() if each.publishes_to == ORIGIN]
    return Replays(kinds=frozenset(each.name for each in to_origins),
                   actions=frozenset(each.audited_as for each in to_origins))


def resolving() -> Resolving:
    """(audit action, outcome) -> the state it leaves the letters it names in, as each kind
    declares (``resolves``): what the failure analytics count as resolved (console.pipeline.analytics)."""
    return {(each.audited_as, each.resolves[0]): each.resolves[1] for each in all_kinds() if each.resolves}


def choices() -> list[tuple[str, str]]:
    """(name, label) of every kind: ``Job.kind``'s choices, and the API's enum of job kinds."""
    return [(each.name, each.label) for each in all_kinds()]


def offered(page: str, capabilities: dict[str, bool] | None = None) -> list[JobKind[Any]]:
    """The kinds ``page`` offers (console.jobs.kinds.base.SELECTION, ...), for a place whose
    adapter has ``capabilities``; every kind the page may offer anywhere when None."""
    return [each for each in all_kinds()
            if page in each.offered_on and (capabilities is None or each.offered(page, capabilities))]


__all__ = ["KINDS", "JobKind", "Plan", "all_kinds", "choices", "kind", "offered", "register", "unregister"]
