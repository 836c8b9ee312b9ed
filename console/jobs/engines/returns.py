"""Watching a replay for letters that die again: the canary and the return threshold.

Every replayed message carries our replay id; when its consumer fails again it dies into its
dead place, and capturing that place links the new letter to the old one and counts it in the
job's ``returned`` (console.services.custody). So a watched replay captures the dead places it
replays from, now and then, and compares how many came back with how many it replayed:

- with a canary of K letters, the job replays the first K, then waits
  ``canary_wait_seconds`` (capturing all the while) and goes on only if the share that came
  back is at most ``return_threshold`` percent; otherwise it pauses itself;
- after the canary (or without one), it looks again every WATCH_SECONDS and pauses itself as
  soon as the share passes the threshold.

A job that paused itself says why in ``pause_reason``; resuming it starts a new canary, and
counts returns from there on. The letters the watch captures are stored and audited like any
capture (reason: the watch of this job).
"""

from __future__ import annotations

import time
from typing import Any, Protocol

from django.db import transaction
from django.utils import timezone

from console.jobs.control import Stop, checkpoint, note
from console.jobs.engines.capture import capture_pass
from console.models import DeadPlace, Job
from console.services import audit
from console.wording import counted

#: Seconds between two looks at the dead places once the canary has passed.
WATCH_SECONDS = 5.0
#: The share that came back is judged only over at least this many replayed letters.
MIN_SAMPLE = 20
#: How long one look may capture, at most, from each place between two batches.
LOOK_SECONDS = 1.0
#: A canary asked for without a threshold pauses above this share (percent).
DEFAULT_THRESHOLD = 5.0
#: Who the audit says paused a job that paused itself.
WATCHER = "system:return-watch"


class Pacing(Protocol):
    """What the engines read of a job's pace (console.jobs.kinds.pace.Pace, which they cannot
    import: the kinds sit above the engines)."""

    @property
    def rate_limit(self) -> int | None: ...

    @property
    def concurrency(self) -> int: ...

    @property
    def canary_size(self) -> int | None: ...

    @property
    def canary_wait(self) -> int: ...

    @property
    def return_threshold(self) -> float | None: ...


class ReturnWatch:
    def __init__(self, job: Job, pace: Pacing) -> None:
        self.job = job
        self.canary = pace.canary_size or 0
        self.canary_wait = pace.canary_wait
        threshold = pace.return_threshold
        self.threshold = DEFAULT_THRESHOLD if threshold is None and self.canary else threshold
        self.enabled = self.threshold is not None
        state = dict(job.watch or {})
        if self.enabled and "base_done" not in state:
            state = {"base_done": job.done, "base_handled": job.done + job.failed,
                     "base_returned": job.returned, "canary_passed": not self.canary, "places": [],
                     "resumed": bool(state.get("resumed"))}
            self._save(state)
        self.state = state
        self._last_look = time.monotonic()

    # -- what the publishing loop asks -----------------------------------------------------------

    def room(self, wanted: int, *, in_air: int) -> int:
        """How many letters the loop may take now: all it wants, except during a canary,
        which stops at K letters and then waits for :meth:`judge_canary` (0 until then)."""
        if not self.enabled or self.state["canary_passed"]:
            return wanted
        handled: int = self.job.done + self.job.failed - self.state["base_handled"]
        return max(0, min(wanted, self.canary - handled - in_air))

    def saw(self, place_ids: set[int]) -> None:
        """Replayed letters came from these places: their returns die there."""
        if self.enabled and not place_ids <= set(self.state["places"]):
            self.state["places"] = sorted(set(self.state["places"]) | place_ids)
            self._save(self.state)

    def after_batch(self) -> None:
        """Between batches, once the canary has passed: look now and then, pause if too many came back."""
        if not self.enabled or not self.state["canary_passed"]:
            return
        if time.monotonic() - self._last_look < WATCH_SECONDS:
            return
        self._look(time.monotonic() + LOOK_SECONDS)
        replayed, returned = self._counts()
        if replayed >= MIN_SAMPLE and self._too_many(replayed, returned):
            self._pause(f"{returned} of {counted(replayed, 'letter')} replayed since the job "
                        f"{'resumed' if self.job.watch.get('resumed') else 'started'} came back "
                        f"({_percent(returned, replayed)}), above the threshold of {self.threshold:g}%")

    def judge_canary(self) -> None:
        """The canary is out: watch its places for ``canary_wait_seconds``, then go on or pause."""
        job = self.job
        replayed, _ = self._counts()
        note(job, f"canary: {counted(replayed, 'letter')} replayed; watching for returns for {self.canary_wait}s")
        deadline = time.monotonic() + self.canary_wait
        while time.monotonic() < deadline:
            checkpoint(job)
            started = time.monotonic()
            self._look(min(deadline, started + LOOK_SECONDS))
            Job.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now())
            rest = min(deadline, started + LOOK_SECONDS) - time.monotonic()
            if rest > 0:
                time.sleep(rest)
        replayed, returned = self._counts()
        if self._too_many(max(replayed, 1), returned):
            self._pause(f"canary: {returned} of {counted(replayed, 'letter')} came back within "
                        f"{self.canary_wait}s ({_percent(returned, replayed)}), above the "
                        f"threshold of {self.threshold:g}%")
        self.state["canary_passed"] = True
        self._save(self.state)
        note(job, f"canary passed: {returned} of {counted(replayed, 'letter')} came back "
                  f"({_percent(returned, replayed)}, threshold {self.threshold:g}%); going on")

    def summary(self) -> str:
        if not self.enabled:
            return ""
        replayed, returned = self._counts()
        return f"; {returned} of {replayed} came back while watched"

    # -- the rest ----------------------------------------------------------------------------------

    def _counts(self) -> tuple[int, int]:
        """Letters replayed and letters returned since the watch (re)started."""
        row = Job.objects.filter(pk=self.job.pk).values("done", "returned").get()
        self.job.returned = row["returned"]
        return row["done"] - self.state["base_done"], row["returned"] - self.state["base_returned"]

    def _too_many(self, replayed: int, returned: int) -> bool:
        return self.threshold is not None and 100.0 * returned / replayed > self.threshold

    def _look(self, until: float) -> None:
        """Capture the watched places (each for a share of the time) so returns are counted; a
        place kept in custody is left to the keeper, which links and counts its returns alike."""
        self._last_look = time.monotonic()
        places = list(DeadPlace.objects.select_related("broker").filter(pk__in=self.state["places"],
                                                                        keep_in_custody=False))
        reason = f"returns of job {self.job.pk} (canary / return watch)"
        for place in places:
            with place.broker.adapter() as adapter:
                capture_pass(adapter, place, job=self.job, reason=reason, limit=lambda: None,
                             until=until, wait_seconds=0.2)

    def _pause(self, why: str) -> None:
        with transaction.atomic():
            Job.objects.filter(pk=self.job.pk).update(pause_reason=why)
            audit.record("job.pause", actor=WATCHER, reason=why, job=self.job, count=self.job.done)
        self.job.pause_reason = why
        note(self.job, f"paused itself: {why}")
        raise Stop(Job.Status.PAUSED)

    def _save(self, state: dict[str, Any]) -> None:
        Job.objects.filter(pk=self.job.pk).update(watch=state)
        self.job.watch = state


def _percent(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "0%"
