"""The pace of the kinds that publish letters (replay, move, edit and replay): a rate limit,
how many connections publish at once, and a canary with a return threshold
(console.jobs.engines.returns). Bounds are refused, not silently clipped."""

from __future__ import annotations

from dataclasses import dataclass

from console.jobs.kinds.base import Ask, Params
from console.services.jobs import JobError

MAX_CONCURRENCY = 16
MAX_CANARY_WAIT_SECONDS = 3600
#: Seconds a canary is watched when the request does not say.
CANARY_WAIT_SECONDS = 30


#: The pace, as the confirm step and the API ask for it.
PACE_ASKS = (
    Ask("rate_limit", int, label="Rate limit (letters per second, optional)", min_value=1, at_confirm=True,
        help="Letters per second (replay and move)"),
    Ask("concurrency", int, label="Connections publishing at once", min_value=1, max_value=MAX_CONCURRENCY,
        initial=1, nullable=False, at_confirm=True,
        help="Connections per broker publishing at once (replay and move); above 1, order across them is not kept"),
    Ask("canary_size", int, label="Canary: replay this many first, then wait (optional)", min_value=1,
        at_confirm=True, help="Replay this many letters first, wait, and go on only if few came back"),
    Ask("canary_wait_seconds", int, label="Canary wait (seconds, default 30)", min_value=0,
        max_value=MAX_CANARY_WAIT_SECONDS, at_confirm=True,
        help="How long to watch for returns after the canary (default 30)"),
    Ask("return_threshold", float, label="Pause when more than this % come back (default 5 with a canary)",
        min_value=0, max_value=100, at_confirm=True,
        help="Percent of replayed letters coming back above which the job pauses itself (default 5 with a canary)"),
)
#: The queue a move (or any kind publishing to a TARGET) sends the letters to.
TARGET_QUEUE = Ask("target", label="Target queue (move)", what="a target queue", max_length=500, required=True,
                   queue=True,
                   help="Destination queue; only and always for a move")


@dataclass(frozen=True)
class Pace(Params):
    rate_limit: int | None = None
    concurrency: int = 1
    canary_size: int | None = None
    canary_wait_seconds: int | None = None
    return_threshold: float | None = None

    @property
    def canary_wait(self) -> int:
        return CANARY_WAIT_SECONDS if self.canary_wait_seconds is None else self.canary_wait_seconds

    def check(self) -> None:
        """JobError naming the setting that is out of bounds."""
        if self.rate_limit is not None and self.rate_limit < 1:
            raise JobError("rate_limit must be at least 1 letter per second")
        if not 1 <= self.concurrency <= MAX_CONCURRENCY:
            raise JobError(f"concurrency must be between 1 and {MAX_CONCURRENCY} connections")
        if self.canary_size is not None and self.canary_size < 1:
            raise JobError("canary_size must be at least 1 letter")
        if self.canary_wait_seconds is not None and not 0 <= self.canary_wait_seconds <= MAX_CANARY_WAIT_SECONDS:
            raise JobError(f"canary_wait_seconds must be between 0 and {MAX_CANARY_WAIT_SECONDS}")
        if self.canary_wait_seconds is not None and self.canary_size is None:
            raise JobError("canary_wait_seconds needs a canary_size")
        if self.return_threshold is not None and not 0 <= self.return_threshold <= 100:
            raise JobError("return_threshold is a percentage, between 0 and 100")


@dataclass(frozen=True)
class MoveParams(Pace):
    target: str = ""
