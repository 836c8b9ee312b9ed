"""Shovel: a whole dead place moved by the broker itself, then proved by counting.

The broker does the moving (the adapter's ``start_server_move``: RabbitMQ's dynamic shovel).
This loop counts the place and the target first, starts the move under a name derived from the
job, follows it while it runs (progress into ``job.done``, heartbeat, cancel, broker outages),
and once the move has removed itself checks the counts: the place lost the N messages it held
and the target gained N. Anything else fails the job, saying what the counts show.

Because the name comes from the job, a job resumed after its worker died finds its own move on
the broker instead of starting a second one. What the job has learnt is kept in
``job.selection``: the counts before, and whether the move was asked for.

Letters the console holds in custody are not touched: the broker moves what is on the broker.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from console.brokers import Adapter, BrokerError, PlaceRef
from console.jobs.control import Stop, checkpoint, note, place_of, with_broker_retry
from console.models import DeadPlace, Job
from console.services import audit

T = TypeVar("T")

#: Seconds between two looks at the move and the counts.
POLL_SECONDS = 0.25


def move_name(job: Job) -> str:
    """The job's move on the broker: the same on every run of the job, and distinct between
    consoles sharing one broker (job ids alone repeat from one database to the next)."""
    return f"dead-letter-office-job-{job.pk}-{job.created_at:%Y%m%dT%H%M%S%f}"


@dataclass(frozen=True)
class Counts:
    """Ready messages in the place (source) and the target, and who consumes from them."""

    source: int
    target: int
    source_consumers: int = 0
    target_consumers: int = 0


def run_shovel(job: Job, target: str) -> str:
    """Move everything in the job's place to the queue ``target`` on the broker, and prove it."""
    place = place_of(job)
    with place.broker.adapter() as adapter:
        run = ShovelRun(job, place, adapter, target)
        if not run.begin():
            return f"{place} was empty on the broker: nothing to move"
        try:
            run.follow()
        except BrokerError:
            if not run.removed:
                note(job, f"the shovel {run.name} may still be moving messages on the broker: "
                          f"it removes itself once it has moved {run.expected}")
            raise
        return run.verify()


class ShovelRun:
    def __init__(self, job: Job, place: DeadPlace, adapter: Adapter, target: str) -> None:
        self.job = job
        self.target_name = target
        self.place = place
        self.adapter = adapter
        self.source = place.ref
        self.target = PlaceRef(target, place.scope)
        self.name = move_name(job)
        self.removed = False  # this run removed the move (cancel, stall)

    # -- what the job knows ------------------------------------------------------------------

    @property
    def before(self) -> Counts:
        return Counts(**self.job.selection["before"])

    @property
    def expected(self) -> int:
        return self.before.source

    def _remember(self, **facts: Any) -> None:
        self.job.selection = {**self.job.selection, **facts}
        Job.objects.filter(pk=self.job.pk).update(selection=self.job.selection, heartbeat_at=timezone.now())

    def _retry(self, action: Callable[[], T]) -> T:
        """The action, waiting out broker outages; the job remembers it waited one out, since
        the shovel may then have sent some messages twice."""
        waited = False

        def attempt() -> T:
            nonlocal waited
            try:
                return action()
            except BrokerError as exc:
                waited = waited or not exc.permanent
                raise

        result = with_broker_retry(self.job, attempt)
        if waited and not self.job.selection.get("outage"):
            self._remember(outage=True)
        return result

    def count(self) -> Counts:
        def both() -> Counts:
            source = self.adapter.stats(self.source)
            target = self.adapter.stats(self.target)
            return Counts(source.depth or 0, target.depth or 0, source.consumers or 0, target.consumers or 0)

        return self._retry(both)

    # -- the steps -----------------------------------------------------------------------------

    def begin(self) -> bool:
        """Count before (on the first run), then start the move, or find it on a resumed run.
        False when the place is empty: there is nothing to move."""
        if "before" not in self.job.selection:
            now = self.count()  # a missing target fails here, before a shovel could create it
            if now.source_consumers:
                raise BrokerError(
                    f"{self.place} has {now.source_consumers} consumer(s) taking messages from it: they would "
                    "take messages the shovel is meant to move and the counts could not prove the move; "
                    "stop them first, or capture the letters instead", permanent=True)
            self._remember(before=asdict(now), shovel=self.name)
            Job.objects.filter(pk=self.job.pk).update(total=now.source)
            self.job.total = now.source
            note(self.job, f"counted before: {now.source} messages in {self.place.name}, "
                           f"{now.target} in {self.target_name}")
        if not self.expected:
            self._record("nothing to move", self.before, moved=0)
            return False
        self._checkpoint()
        move = self._retry(lambda: self.adapter.server_move(self.source, self.name))
        if move is not None:
            self._remember(resend_window=move.resend_window)
            note(self.job, f"found its shovel {self.name} on the broker ({move.state}): following it")
            return True
        if self.job.selection.get("started"):
            now = self.count()
            if now.source < self.before.source or now.target > self.before.target:
                note(self.job, f"its shovel {self.name} finished while no worker was watching")
                return True
            note(self.job, f"its shovel {self.name} never started (its worker stopped first): starting it now")
        # Remembered before it is asked for: a worker dying in between leaves a job that
        # checks the counts before starting anything (above), never one that starts twice.
        self._remember(started=True)
        move = self._retry(lambda: self.adapter.start_server_move(self.source, self.target_name, name=self.name,
                                                                  count=self.expected))
        self._remember(resend_window=move.resend_window)
        note(self.job, f"started the shovel {self.name}: the broker moves {self.expected} messages "
                       f"from {self.place.name} to {self.target_name}")
        return True

    def follow(self) -> None:
        """Until the move has removed itself: progress and heartbeat, cancel, and giving up on
        a move that has moved nothing for DLO_BROKER_WAIT_SECONDS."""
        last, since, state = -1, time.monotonic(), ""
        while True:
            self._checkpoint()
            move = self._retry(lambda: self.adapter.server_move(self.source, self.name))
            now = self.count()
            moved = self.moved(now)
            Job.objects.filter(pk=self.job.pk).update(done=moved, heartbeat_at=timezone.now())
            self.job.done = moved
            if move is None:
                return
            if self.all_moved(now):
                # Done by the counts while the shovel is still there. A shovel restarted with
                # its broker counts its src-delete-after from zero again and would wait for
                # more; removed now, it cannot take letters that arrive later.
                self._retry(lambda: self.adapter.stop_server_move(self.source, self.name))
                self.removed = True
                note(self.job, f"the counts show all {self.expected} messages moved while the shovel "
                               f"{self.name} was still running (restarted with its broker?): it was removed")
                return
            if move.state != state:
                state = move.state
                why = move.details.get("reason")
                note(self.job, f"the broker reports the shovel {state}" + (f": {why}" if why else ""))
            if moved != last:
                last, since = moved, time.monotonic()
            elif time.monotonic() - since > settings.DLO_BROKER_WAIT_SECONDS:
                self._retry(lambda: self.adapter.stop_server_move(self.source, self.name))
                self.removed = True
                now = self.count()
                self._record("stalled", now, moved=self.moved(now))
                raise BrokerError(
                    f"the shovel {self.name} moved nothing for {settings.DLO_BROKER_WAIT_SECONDS} s (the broker "
                    f"reports it {state}), so it was removed: {self.moved(now)} of {self.expected} messages "
                    f"had moved and stay in {self.target_name}; {now.source} are in {self.place.name}",
                    permanent=True)
            time.sleep(POLL_SECONDS)

    def consumed(self, now: Counts) -> bool:
        """The target has consumers, who take what arrives: its count proves nothing."""
        return bool(self.before.target_consumers or now.target_consumers)

    def all_moved(self, now: Counts) -> bool:
        """The place lost what it held and (unless consumers empty it) the target gained it."""
        lost = self.before.source - now.source
        return lost >= self.expected and (self.consumed(now) or now.target - self.before.target >= self.expected)

    def moved(self, now: Counts) -> int:
        """How many have moved so far: what the target gained, or, when the target has
        consumers, what the place lost."""
        if self.consumed(now):
            gone = self.before.source - now.source
        else:
            gone = now.target - self.before.target
        return max(0, min(self.expected, gone))

    def _checkpoint(self) -> None:
        """Stop when the operator cancelled; a shovel already asked for is removed first."""
        try:
            checkpoint(self.job)
        except Stop:
            if self.job.selection.get("started"):
                self._stop_early()
            raise

    def _stop_early(self) -> None:
        self._retry(lambda: self.adapter.stop_server_move(self.source, self.name))
        self.removed = True
        now = self.count()
        moved = self.moved(now)
        self.job.done = moved
        Job.objects.filter(pk=self.job.pk).update(done=moved)
        note(self.job, f"the shovel {self.name} was removed: {moved} messages already moved stay in "
                       f"{self.target_name}; {now.source} are in {self.place.name}")
        self._record("cancelled", now, moved=moved)

    def verify(self) -> str:
        """The move has removed itself: the counts must show it moved exactly what it should."""
        before, now, expected = self.before, self.count(), self.expected
        lost, gained = before.source - now.source, now.target - before.target
        consumed = self.consumed(now)
        if consumed:
            note(self.job, f"{self.target_name} has consumers, who take what arrives: its count cannot prove "
                           f"the move, so the proof is {self.place.name} having lost exactly {expected}")
        resent = self.resent(lost, gained, consumed)
        proved = lost == expected and (consumed or gained == expected or resent)
        DeadPlace.objects.filter(pk=self.place.pk).update(depth=now.source, consumers=now.source_consumers,
                                                          last_seen_at=timezone.now())
        if not proved:
            self._record("mismatch", now, moved=self.moved(now))
            raise BrokerError(self._mismatch(lost, gained, consumed), permanent=True)
        Job.objects.filter(pk=self.job.pk).update(done=expected)
        self.job.done = expected
        self._record("verified", now, moved=expected, resent=resent)
        proof = f"{self.place.name} lost {lost}" + ("" if consumed else f" and {self.target_name} gained {gained}")
        if resent:
            note(self.job, f"{self.target_name} gained {resent} more than {self.place.name} lost: copies the shovel "
                           "sent again after the broker went away (a shovel delivers at least once, up to "
                           f"{self.job.selection.get('resend_window')} at a time); nothing was lost")
            proof += f" ({resent} of them sent twice across the broker outage)"
        return f"moved {expected} messages from {self.place} to {self.target_name} on the broker; verified: {proof}"

    def resent(self, lost: int, gained: int, consumed: bool) -> int:
        """Copies sent twice, when the counts show them and the job waited out an outage: the
        place lost all it held and the target gained more, by no more than the shovel's window."""
        extra = gained - lost
        window = self.job.selection.get("resend_window") or 0
        if consumed or not self.job.selection.get("outage") or lost != self.expected or not 0 < extra <= window:
            return 0
        return extra

    def _mismatch(self, lost: int, gained: int, consumed: bool) -> str:
        expected, source, target = self.expected, self.place.name, self.target_name
        said = (f"the counts do not prove the move: {source} lost {lost} messages"
                + ("" if consumed else f" and {target} gained {gained}") + f", where {expected} were expected")
        if not consumed and lost == gained < expected:
            why = (f"the broker moved only {lost}; the other {expected - lost} are still in {source} "
                   f"(the target may have refused them, e.g. a full queue)")
        elif lost < expected and (consumed or gained == expected):
            why = (f"{source} holds {expected - lost} more than it should: dead letters that arrived during "
                   f"the move, or copies the broker left behind; look before moving again")
        elif not consumed and gained < lost:
            why = f"{lost - gained} left {source} without arriving in {target}: something else took them"
        else:
            why = f"something else put messages into or took them from {source} or {target} meanwhile"
        return f"{said}: {why}"

    def _record(self, outcome: str, now: Counts, *, moved: int, resent: int = 0) -> None:
        """The outcome in the audit, with the counts (committed even when the job then fails)."""
        job = self.job
        with transaction.atomic():
            audit.record(job.kind, actor=job.actor_name, reason=job.reason, ticket=job.ticket, job=job,
                         place=self.place, target=self.target_name, count=moved, outcome=outcome,
                         details={"shovel": self.name, "expected": self.expected, "sent_twice": resent,
                                  "before": asdict(self.before), "after": asdict(now)})
