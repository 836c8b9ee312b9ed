"""The base of the kinds that act on one dead place as the broker holds it (capture, shovel)."""

from __future__ import annotations

from typing import Any, ClassVar

from console.jobs.kinds.base import JobKind, P
from console.models import DeadPlace, Job
from console.services.jobs import JobError


class PlaceKind(JobKind[P]):
    inputs: ClassVar[frozenset[str]] = frozenset({"place"})
    facts_template = ""  # its job page shows the place, as every job's page does
    #: Kinds whose unfinished jobs on the same place refuse a new one of this kind.
    exclusive_with: ClassVar[tuple[str, ...]] = ()
    #: It reads the place on the broker, so a place discovery no longer finds is refused (a keep
    #: job is the keeper's, which lets a gone place go by itself).
    reads_place: ClassVar[bool] = True

    def place(self, given: dict[str, Any]) -> DeadPlace:
        place = given.get("place")
        if not isinstance(place, DeadPlace):
            raise JobError(f"a {self.name} job needs a dead place")
        if place.kind == DeadPlace.IMPORTED:
            raise JobError(f"{place} holds letters imported from an export: there is no queue of it on "
                           f"{place.broker.name} to {self.name}")
        if self.reads_place and place.gone:
            raise JobError(f"{place} is gone from its broker (discovery no longer finds it): there is nothing "
                           f"to {self.name}; discover again if it is back")
        return place

    def refuse_if_busy(self, place: DeadPlace) -> None:
        busy = (Job.objects.filter(kind__in=self.exclusive_with, place=place)
                .exclude(status__in=Job.FINISHED).first())
        if busy is not None:
            raise JobError(f"job {busy.pk} ({busy.kind}) is already taking messages from {place}; "
                           "wait for it or cancel it")
