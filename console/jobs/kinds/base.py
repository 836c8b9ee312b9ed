"""What every job kind provides, and the plan a request for it makes."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar

from console.access.roles import ACT
from console.models import DeadPlace, Job
from console.services.audit import Actor
from console.services.jobs import JobError


@dataclass(frozen=True)
class Target:
    """A queue a job publishes into that is not the origin of the letters it takes."""

    broker_id: int
    name: str
    scope: str = ""


@dataclass
class Plan:
    """What a requested job will touch, worked out inside the request's transaction.

    ``per_place`` counts letters per dead place id (None where the count is not known, e.g.
    a capture of a place whose depth the broker did not tell); the scope guard checks every
    place and every target, and the approval rule sums ``per_place`` per requester.
    """

    per_place: dict[int, int | None]
    selection: dict[str, Any] = field(default_factory=dict)
    targets: list[Target] = field(default_factory=list)
    details: dict[str, Any] = field(default_factory=dict)  # more for the audit row of the request
    made: Any = None  # what the plan made on the way, for the kind's ``requested`` (not audited)

    @property
    def total(self) -> int | None:
        """Letters asked for in all, None when any place's count is unknown."""
        counts = list(self.per_place.values())
        return None if any(count is None for count in counts) else sum(counts)

    @property
    def place(self) -> DeadPlace | None:
        """The one dead place the job acts on, when there is just one."""
        if len(self.per_place) != 1:
            return None
        return DeadPlace.objects.select_related("broker").filter(pk=next(iter(self.per_place))).first()


class Params:
    """Base of a kind's typed parameters: a frozen dataclass, kept as JSON on the job."""

    @classmethod
    def of(cls, job: Job):
        """The parameters of a job of this kind, as they were validated when it was asked for."""
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{key: value for key, value in (job.params or {}).items() if key in names})

    def to_json(self) -> dict[str, Any]:
        """The parameters that differ from their defaults (what the job row and audit keep)."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if getattr(self, f.name) != f.default}


@dataclass(frozen=True)
class NoParams(Params):
    pass


class JobKind:
    """One kind of job. Subclasses set the class attributes and implement :meth:`parse`,
    :meth:`plan` and :meth:`run`."""

    name: ClassVar[str]
    #: The permission a person needs to ask for it, and to approve it (console.access.roles).
    permission: ClassVar[str] = ACT
    #: It always waits for a second person, whatever its size (a purge).
    always_approved: ClassVar[bool] = False
    #: It may be paused between batches (a shovel is one call to the broker).
    can_pause: ClassVar[bool] = True
    params: ClassVar[type[Params]] = NoParams
    #: Run by the Celery worker (console.jobs.door.runner); a keep job runs in the keeper instead.
    in_worker: ClassVar[bool] = True
    #: What a request names besides parameters: which letters or place (read by :meth:`plan`).
    inputs: ClassVar[frozenset[str]] = frozenset()
    #: It publishes letters to their origins (a replay), so those are guarded like targets.
    publishes_to_origins: ClassVar[bool] = False

    def parse(self, given: dict[str, Any]) -> Params:
        """Typed, validated parameters from what was asked (JobError saying what is wrong).
        ``given`` holds the request's keywords other than actor, reason and ticket; None and ""
        stand for "not given"."""
        names = {f.name for f in dataclasses.fields(self.params)}
        given = {key: value for key, value in given.items() if value is not None and value != ""}
        unknown = sorted(key for key in given if key not in names and key not in self.inputs)
        if unknown:
            raise JobError(f"a {self.name.replace('_', ' ')} job does not take {', '.join(unknown)}")
        params = self.params(**{key: value for key, value in given.items() if key in names})
        self.validate(params)
        return params

    def validate(self, params: Params) -> None:
        """JobError when the parameters do not go together (nothing to check by default)."""

    def check_outside(self, params: Params, given: dict[str, Any]) -> Any:
        """Checks that talk to a broker, before the request's transaction opens (none by default)."""
        return None

    def plan(self, params: Params, given: dict[str, Any], *, actor: Actor, checked: Any) -> Plan:
        raise NotImplementedError

    def requested(self, job: Job, plan: Plan, *, actor: Actor) -> None:
        """More to write in the request's transaction once the job row exists (nothing by default)."""

    def targets(self, job: Job) -> list[Target]:
        """The queues the job publishes into beyond the letters' origins (for an approver's scope)."""
        return []

    def origins(self, selection: dict[str, Any]) -> list[Target]:
        """The letters' origins the job publishes into, from its frozen selection: each letter
        names its own, in its headers, so the scope guard asks the broker whether the actor may
        publish there (console.access.guards; invariant 11)."""
        if not self.publishes_to_origins:
            return []
        from console.services.selection import resolve

        named = (resolve(selection).exclude(origin_queue="").order_by()
                 .values_list("broker_id", "origin_queue", "place__scope").distinct())
        return [Target(broker_id, name, scope) for broker_id, name, scope in sorted(named)]

    def cancelled(self, job: Job, *, actor: Actor, reason: str) -> None:
        """More to do, in the cancel's transaction, when a person cancels a job (nothing by default)."""

    def run(self, job: Job) -> str:
        """Run the job to its end (or raise console.jobs.control.Stop); a summary for its log."""
        raise NotImplementedError
