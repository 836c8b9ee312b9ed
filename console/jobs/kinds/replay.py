"""Replay: publish letters to the subscription each one died in, with the broker's confirms
(console.jobs.engines.publish), at the pace the request sets."""

from __future__ import annotations

from typing import ClassVar

from console.jobs.engines.publish import run_publish
from console.jobs.kinds.letters import LettersKind
from console.jobs.kinds.pace import Pace


class Replay(LettersKind):
    name = "replay"
    params: ClassVar[type[Pace]] = Pace
    publishes_to_origins = True

    def validate(self, params: Pace) -> None:
        params.check()

    def run(self, job) -> str:
        return run_publish(job, Pace.of(job))
