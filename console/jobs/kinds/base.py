"""What every job kind provides, and the plan a request for it makes.

A kind owns its surface as well as its runner: its label, the pages that offer it, what it
asks for (:class:`Ask`, from which the pages build their form fields and the API its serializer
fields), where it publishes letters and what the audit calls that, and whether it pauses.
The pages' action menus, preview and confirm, the job page, the API (and its schema) and the
publisher read these instead of naming kinds; so do retention and the failure analytics,
which sit below the jobs layer and are handed them (console.jobs.kinds.replays and resolving).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, Self, TypeVar

from console.access.actors import Actor
from console.access.roles import ACT
from console.models import DeadPlace, Job
from console.services.jobs import JobError
from console.services.selection import resolve

#: The pages that may offer a kind (:attr:`JobKind.offered_on`).
SELECTION = "selection"  # the ticked or all matching letters of a place page, and POST /api/jobs/
LETTER = "letter"  # one letter's page (a kind also offered on a SELECTION, for that letter alone)
PLACE = "place"  # a dead place as the broker holds it (its page, the inventory)

#: Where a kind publishes letters (:attr:`JobKind.publishes_to`).
ORIGIN = "origin"  # each letter to the subscription it died in
TARGET = "target"  # to the queue the request's ``target`` names


@dataclass(frozen=True)
class Ask:
    """One thing a request for a kind takes besides its letters (or place), reason and ticket.

    Declared once by the kind; the pages make a form field of it (console.web.action_forms) and
    the API a serializer field (console.api.jobs). The kind's own :meth:`JobKind.validate`
    still decides what a value means.
    """

    name: str
    type: type = str  # str, int or float
    label: str = ""  # what a page's form calls it
    help: str = ""  # what the API's schema says of it
    what: str = ""  # what it is, in words, for "A move needs a target queue."
    required: bool = False  # a request without it is refused
    min_value: int | None = None  # bounds are whole numbers, for a float's too
    max_value: int | None = None
    max_length: int | None = None
    initial: Any = None  # a page form's starting value
    nullable: bool = True  # the API takes null for "not given" (a string takes "")
    queue: bool = False  # it names a queue on the letters' broker: a page suggests the ones the reader sees
    at_confirm: bool = False  # a page asks for it under the preview, not with the action


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
        counts = [count for count in self.per_place.values() if count is not None]
        return None if len(counts) < len(self.per_place) else sum(counts)

    @property
    def place(self) -> DeadPlace | None:
        """The one dead place the job acts on, when there is just one."""
        if len(self.per_place) != 1:
            return None
        return DeadPlace.objects.select_related("broker").filter(pk=next(iter(self.per_place))).first()


@dataclass(frozen=True)
class Params:
    """Base of a kind's typed parameters: a frozen dataclass, kept as JSON on the job."""

    @classmethod
    def of(cls, job: Job) -> Self:
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


#: A kind's parameters (:attr:`JobKind.params`).
P = TypeVar("P", bound=Params)


class JobKind(Generic[P]):
    """One kind of job, taking parameters of type ``P``. Subclasses set the class attributes
    and implement :meth:`plan` and :meth:`run`."""

    name: ClassVar[str]
    #: What pages and the API call a job of it (Job.kind's label).
    label: ClassVar[str] = ""
    #: What an action menu calls it (default: its label).
    action_label: ClassVar[str] = ""
    #: The pages that offer it (SELECTION, LETTER, PLACE).
    offered_on: ClassVar[frozenset[str]] = frozenset()
    #: The adapter capability a broker needs for it to be offered there (console.brokers.base).
    needs: ClassVar[str] = ""
    #: What a request for it takes besides letters, reason and ticket.
    asks: ClassVar[tuple[Ask, ...]] = ()
    #: Where it publishes letters: ORIGIN, TARGET, or "" (it publishes none).
    publishes_to: ClassVar[str] = ""
    #: What the audit calls publishing one letter (default: the kind's name).
    audited_as: ClassVar[str] = ""
    #: The letter state its audit rows of an outcome leave the letters they name in, as
    #: (outcome, state): the failure analytics read these (console.pipeline.analytics).
    resolves: ClassVar[tuple[str, str] | None] = None
    #: What cannot be undone, said on its confirm step, which then asks for the place's name.
    cannot_be_undone: ClassVar[str] = ""
    #: What a job's page shows of what it acts on, besides what every job shows ("" nothing).
    facts_template: ClassVar[str] = "web/partials/job_letters.html"
    #: The permission a person needs to ask for it, and to approve it (console.access.roles).
    permission: ClassVar[str] = ACT
    #: It always waits for a second person, whatever its size (a purge).
    always_approved: ClassVar[bool] = False
    #: It may be paused between batches (a shovel is one call to the broker).
    can_pause: ClassVar[bool] = True
    #: The class of its parameters: NoParams, unless a kind takes some.
    params: type[P] = NoParams  # type: ignore[assignment]  # P is NoParams for a kind that sets none
    #: Run by the Celery worker (console.jobs.door.runner); a keep job runs in the keeper instead.
    in_worker: ClassVar[bool] = True
    #: What a request names besides parameters: which letters or place (read by :meth:`plan`).
    inputs: ClassVar[frozenset[str]] = frozenset()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__:
            cls.label = cls.__dict__.get("label") or cls.name.replace("_", " ").title()
            cls.action_label = cls.__dict__.get("action_label") or cls.label
            cls.audited_as = cls.__dict__.get("audited_as") or cls.name

    @property
    def asked(self) -> frozenset[str]:
        """The names of what it asks for (a page shows a pace where it asks for one)."""
        return frozenset(ask.name for ask in self.asks)

    def offered(self, page: str, capabilities: dict[str, bool]) -> bool:
        """Whether ``page`` offers it for a place whose adapter has ``capabilities``."""
        return page in self.offered_on and (not self.needs or bool(capabilities.get(self.needs)))

    def parse(self, given: dict[str, Any]) -> P:
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

    def validate(self, params: P) -> None:
        """JobError when the parameters do not go together (nothing to check by default)."""

    def check_outside(self, params: P, given: dict[str, Any]) -> Any:
        """Checks that talk to a broker, before the request's transaction opens (none by default)."""
        return None

    def plan(self, params: P, given: dict[str, Any], *, actor: Actor, checked: Any) -> Plan:
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
        if self.publishes_to != ORIGIN:
            return []
        named = (resolve(selection).exclude(origin_queue="").order_by()
                 .values_list("broker_id", "origin_queue", "place__scope").distinct())
        return [Target(broker_id, name, scope) for broker_id, name, scope in sorted(named)]

    def cancelled(self, job: Job, *, actor: Actor, reason: str) -> None:
        """More to do, in the cancel's transaction, when a person cancels a job (nothing by default)."""

    def run(self, job: Job) -> str:
        """Run the job to its end (or raise console.jobs.control.Stop); a summary for its log."""
        raise NotImplementedError
