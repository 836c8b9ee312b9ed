"""Shovel: have the broker itself move everything in a dead place to the queue ``target`` (in
the place's scope), where its adapter can (RabbitMQ's shovel): no selection, no custody
(console.jobs.engines.shovel counts the place and the target before and after, and fails unless the
counts prove the move).

Refused when the adapter cannot, when the target is empty, the place itself, or not a queue
on the broker: RabbitMQ's shovel declares a missing destination, so a mistyped name would
quietly become a new queue holding the letters. The target must be a queue the requester may
act on (console.access.guards)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from console.access.actors import Actor
from console.brokers import BrokerError, PlaceInfo, PlaceRef, adapter_class
from console.jobs.engines.shovel import run_shovel
from console.jobs.kinds.base import PLACE, TARGET, Ask, Params, Plan, Target
from console.jobs.kinds.places import PlaceKind
from console.models import DeadPlace, Job
from console.services.jobs import JobError


@dataclass(frozen=True)
class ShovelParams(Params):
    target: str = ""


class Shovel(PlaceKind[ShovelParams]):
    name = "shovel"
    params = ShovelParams
    exclusive_with = ("capture", "shovel")
    can_pause = False  # the broker moves the whole place in one go: it can be stopped, not paused
    offered_on = frozenset({PLACE})
    needs = "server_side_move"
    asks = (Ask("target", label="Target queue (must exist)", what="a target queue", max_length=500, required=True,
                queue=True, help="Existing queue, in the place's vhost/scope, that receives every message "
                                 "the place holds on the broker"),)
    publishes_to = TARGET
    #: What the job page shows of it besides what every job shows.
    facts_template = "web/partials/shovel_facts.html"

    def parse(self, given: dict[str, Any]) -> ShovelParams:
        return super().parse({**given, "target": (given.get("target") or "").strip() or None})

    def validate(self, params: ShovelParams) -> None:
        if not params.target:
            raise JobError("a move of the whole queue needs a target queue")

    def check_outside(self, params: ShovelParams, given: dict[str, Any]) -> PlaceInfo:
        place = self.place(given)
        if params.target == place.name:
            raise JobError(f"the target is {place.name} itself: choose another queue")
        adapter = adapter_class(place.broker.kind)
        if not adapter.can_move_server_side:
            raise JobError(f"{adapter.label or adapter.kind} cannot move a whole queue on the broker; "
                           "capture the letters and move them instead")
        source = _source_with_target_checked(place, params.target)
        if not source.depth:
            raise JobError(f"{place} is empty on the broker: there is nothing to move")
        return source

    def plan(self, params: ShovelParams, given: dict[str, Any], *, actor: Actor, checked: PlaceInfo) -> Plan:
        place = self.place(given)
        self.refuse_if_busy(place)
        return Plan(per_place={place.pk: checked.depth},
                    targets=[Target(place.broker_id, params.target, place.scope)],
                    details={"depth": checked.depth})

    def targets(self, job: Job) -> list[Target]:
        place = job.place
        return [] if place is None else [Target(place.broker_id, ShovelParams.of(job).target, place.scope)]

    def run(self, job: Job) -> str:
        return run_shovel(job, ShovelParams.of(job).target)


def _source_with_target_checked(place: DeadPlace, target: str) -> PlaceInfo:
    """The place's counts on the broker, once the target queue is known to exist there;
    JobError saying what is wrong otherwise."""
    with place.broker.adapter() as adapter:
        try:
            source = adapter.stats(place.ref)
        except BrokerError as exc:
            raise JobError(f"cannot count {place} on the broker: {exc.message}") from None
        try:
            adapter.stats(PlaceRef(target, place.scope))
            return source
        except BrokerError as exc:
            if not exc.permanent:
                raise JobError(f"cannot check the target queue {target!r} on the broker: {exc.message}") from None
            raise JobError(f"the target queue {target!r} cannot be used ({exc.message}); the broker would "
                           "create a missing queue, so declare it first or check its name") from None
