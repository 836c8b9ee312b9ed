"""Keep: a dead place kept in custody, drained continuously for as long as it is kept.

Its jobs are asked for by the keeper (console.jobs.automation.keeper) when it takes up a place whose
``keep_in_custody`` a person turned on (console.services.keeping, audited), and run there, in
one process among hundreds of other places, never by the Celery worker. Letters it takes are
counted in ``done``. A keep job asks for no letters when it is made (they arrive as they die,
and nothing leaves custody), so it never waits for approval: the audited switch on the place is
the decision. Pausing it stops draining for a while; cancelling it turns keeping off.
"""

from __future__ import annotations

from typing import Any

from console.access.actors import Actor
from console.jobs.kinds.base import NoParams, Plan
from console.jobs.kinds.places import PlaceKind
from console.models import Job
from console.services.keeping import do_keep


class Keep(PlaceKind[NoParams]):
    reads_place = False
    name = "keep"
    label = "Keep in custody"
    exclusive_with = ("keep",)
    in_worker = False

    def plan(self, params: NoParams, given: dict[str, Any], *, actor: Actor, checked: Any) -> Plan:
        place = self.place(given)
        self.refuse_if_busy(place)
        return Plan(per_place={place.pk: 0})

    def cancelled(self, job: Job, *, actor: Actor, reason: str) -> None:
        """A keep job cancelled by a person turns keeping its place off (else the keeper would
        take the place up again at once)."""
        if job.place is not None:
            do_keep(job.place, False, actor=actor, reason=reason or f"job {job.pk} cancelled")
