"""Replay: publish letters to the subscription each one died in, with the broker's confirms
(console.jobs.engines.publish), at the pace the request sets."""

from __future__ import annotations

from console.jobs.engines.publish import Publishing, run_publish
from console.jobs.kinds.base import LETTER, ORIGIN, SELECTION
from console.jobs.kinds.letters import LettersKind
from console.jobs.kinds.pace import PACE_ASKS, Pace
from console.models import Job, LetterState


class Replay(LettersKind[Pace]):
    name = "replay"
    action_label = "Replay to origin"
    offered_on = frozenset({SELECTION, LETTER})
    params = Pace
    asks = PACE_ASKS
    publishes_to = ORIGIN
    resolves = ("confirmed", LetterState.REPLAYED)

    def validate(self, params: Pace) -> None:
        params.check()

    def run(self, job: Job) -> str:
        return run_publish(job, Pace.of(job), Publishing(self.audited_as))
