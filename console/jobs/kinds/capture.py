"""Capture: take the messages of a dead place into custody; they leave the broker once stored
(console.jobs.engines.capture). Its size is the limit asked for, else the place's depth: a place whose
depth the broker did not tell has an unknown size, which waits for approval."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from console.access.actors import Actor
from console.jobs.engines.capture import run_capture
from console.jobs.kinds.base import PLACE, Ask, Params, Plan
from console.jobs.kinds.places import PlaceKind
from console.models import Job
from console.services.jobs import JobError


@dataclass(frozen=True)
class CaptureParams(Params):
    limit: int | None = None


class Capture(PlaceKind[CaptureParams]):
    name = "capture"
    params = CaptureParams
    exclusive_with = ("capture",)
    offered_on = frozenset({PLACE})
    asks = (Ask("limit", int, label="At most (letters)", min_value=1, help="Take at most this many messages"),)

    def validate(self, params: CaptureParams) -> None:
        if params.limit is not None and params.limit < 1:
            raise JobError("limit must be at least 1")

    def plan(self, params: CaptureParams, given: dict[str, Any], *, actor: Actor, checked: Any) -> Plan:
        place = self.place(given)
        if place.keep_in_custody:
            raise JobError(f"{place} is kept in custody: its letters are taken as they arrive")
        self.refuse_if_busy(place)
        size = params.limit if params.limit is not None else place.depth
        return Plan(per_place={place.pk: size}, details={"limit": params.limit, "depth": place.depth})

    def run(self, job: Job) -> str:
        return run_capture(job, CaptureParams.of(job).limit)
