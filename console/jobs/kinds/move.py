"""Move: publish letters to a chosen queue instead of their origin (console.jobs.engines.publish).

The target must be a queue the requester may act on (console.access.guards), and the letters
must come from one broker."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from console.access.actors import Actor
from console.jobs.engines.publish import Publishing, run_publish
from console.jobs.kinds.base import LETTER, SELECTION, TARGET, Plan, Target
from console.jobs.kinds.letters import LettersKind
from console.jobs.kinds.pace import PACE_ASKS, TARGET_QUEUE, MoveParams
from console.models import DeadPlace, Job, LetterState
from console.services.jobs import JobError


class Move(LettersKind[MoveParams]):
    name = "move"
    action_label = "Move to queue"
    offered_on = frozenset({SELECTION, LETTER})
    needs = "move"
    params = MoveParams
    asks = (TARGET_QUEUE, *PACE_ASKS)
    publishes_to = TARGET
    resolves = ("confirmed", LetterState.REPLAYED)

    def parse(self, given: dict[str, Any]) -> MoveParams:
        target = (given.get("target") or "").strip()
        return super().parse({**given, "target": target or None})

    def validate(self, params: MoveParams) -> None:
        if not params.target:
            raise JobError("a move needs a target queue")
        params.check()

    def plan(self, params: MoveParams, given: dict[str, Any], *, actor: Actor, checked: Any) -> Plan:
        plan = super().plan(params, given, actor=actor, checked=checked)
        plan.targets = _targets(plan.per_place, params.target)
        if len({target.broker_id for target in plan.targets}) > 1:
            raise JobError("a move takes letters from one broker at a time")
        return plan

    def targets(self, job: Job) -> list[Target]:
        return _targets(job.per_place, MoveParams.of(job).target)

    def run(self, job: Job) -> str:
        params = MoveParams.of(job)
        return run_publish(job, params, Publishing(self.audited_as, params.target))


def _targets(place_ids: Iterable[int | str], name: str) -> list[Target]:
    """The target queue in the broker and scope (vhost) of each place the letters come from."""
    places = DeadPlace.objects.filter(pk__in=[int(pk) for pk in place_ids])
    return [Target(broker_id, name, scope)
            for broker_id, scope in sorted(set(places.values_list("broker_id", "scope")))]
