"""The keeper's reading: one thread per reader, a reader per broker (or a few: DLO_KEEPER_CONNECTIONS),
following every place of that broker the keeper holds.

The thread takes what the reader hands over (console.brokers.readers: pushed by the broker as
letters die, or found by one call over all the places), stores it through the capture path in
one transaction for all its places, and acknowledges it after the commit
(console.jobs.engines.capture.keep_taken). An idle place costs its subscription; a letter is
taken as it arrives.

A place that keeps its reader's share full take after take (a stream of deaths, or a backlog)
is handed to a drain of its own for a slice (the keeper's pool, reading in a child process as
a capture job does) and followed again once the drain found it empty or its slice ran out: the
others keep their turn meanwhile.

A broker that does not answer closes the reader (what it held goes back to the broker) and
is tried again after a growing pause; its places' jobs say why (status ``waiting``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field

from django.conf import settings
from django.db import close_old_connections, connection

from console.brokers import Adapter, BrokerError, PlaceRef, Received
from console.brokers.readers import PlaceReader
from console.jobs.engines.capture import keep_taken
from console.models import Broker, DeadPlace, Job
from console.services.custody import mark_place_acked
from console.tracing import telemetry

log = logging.getLogger(__name__)

#: How long a take waits for a letter before the thread looks at what it should follow again,
#: and how long a place whose drain ended or whose broker's pause ran out may wait to be read.
TAKE_WAIT_SECONDS = 0.5
#: Once a letter is in hand, how long the thread waits for more before storing them: letters
#: trickling into many places are stored a few at a time, in one transaction, not one each.
LINGER_SECONDS = 0.2
#: Letters a place gives in takes in a row that each fill its share (at least two such takes)
#: before it gets a drain of its own.
STREAM_LETTERS = 200
#: The pause after an error that is not the broker's, before the places are read again.
AFTER_ERROR_SECONDS = 1.0
#: The longest pause before a broker that failed is tried again.
MAX_BACKOFF_SECONDS = 30.0
#: How long a place with copies waiting for an acknowledgement stays quiet before the reader is
#: asked whether they can be forgotten (console.brokers.readers.PlaceReader.settled).
SETTLE_AFTER_SECONDS = 1.0
#: Statuses of a keep job whose place is read.
DRAINED = (Job.Status.QUEUED, Job.Status.RUNNING, Job.Status.WAITING)


@dataclass
class Held:
    """A place this keeper holds the lock of, and its keep job."""

    place: DeadPlace
    job: Job | None = None
    draining: Future[None] | None = None
    stop: threading.Event = field(default_factory=threading.Event)
    next_look: float = 0.0
    failures: int = 0
    #: Takes in a row that filled the place's share of its reader, and the letters they gave.
    full_takes: int = 0
    full_letters: int = 0
    #: Copies committed but not known to be acknowledged wait for the place to settle.
    unsettled: bool = False
    #: How its reader names it.
    ref: PlaceRef = field(init=False)

    def __post_init__(self) -> None:
        self.ref = self.place.ref

    def readable(self, now: float) -> bool:
        """Its reader follows it: its job runs, no drain of its own reads it, and its broker is
        not being waited for."""
        return (self.job is not None and self.job.status in DRAINED and self.draining is None
                and self.next_look <= now)

    def drained(self, ended: Future[None]) -> None:
        """Called back when its drain ends (on the drain's thread): its reader follows it again,
        unless that drain queued the next one (its slice ran out with letters still coming)."""
        if self.draining is ended:
            self.draining = None


def share(places: int) -> int:
    """Messages of one place a reader may hold (sent ahead by the broker, or taken and not yet
    stored): DLO_KEEPER_PREFETCH, less when its places are many, so that all of them together
    hold at most DLO_KEEPER_HELD, whatever their number."""
    return max(1, min(settings.DLO_KEEPER_PREFETCH, settings.DLO_KEEPER_HELD // max(1, places)))


class Reading(threading.Thread):
    """Reads the places of one broker the keeper gives it (``want``), until ``stopping`` is set."""

    def __init__(self, name: str, broker: Broker, stopping: threading.Event, *,
                 failed: Callable[[Held, str], None], recovered: Callable[[Held], None],
                 drain: Callable[[Held], None]) -> None:
        super().__init__(name=name, daemon=True)
        self.broker = broker
        self.stopping = stopping
        self._failed = failed
        self._recovered = recovered
        self._drain = drain
        self._lock = threading.Lock()
        self._wanted: dict[PlaceRef, Held] = {}
        self._asked = 0  # the generation of what the keeper asked last
        self._applied = 0  # the generation the reader follows
        self._applied_changed = threading.Condition()
        self.reader: PlaceReader | None = None
        self._adapter: Adapter | None = None
        self.failures = 0
        self._quiet_since: dict[PlaceRef, float] = {}
        self._reopen = False
        # The readable places of what was asked (``_readable``), as of a generation and a moment.
        self._readable: dict[PlaceRef, Held] = {}
        self._readable_of = -1
        self._readable_until = 0.0

    # -- what the keeper asks ------------------------------------------------------------------

    def want(self, places: dict[PlaceRef, Held]) -> int:
        """Follow exactly these places from the thread's next turn; returns the generation to
        wait for (``wait_applied``)."""
        with self._lock:
            if places.keys() != self._wanted.keys() or any(places[ref] is not held
                                                           for ref, held in self._wanted.items()):
                self._wanted = dict(places)
                self._asked += 1
            return self._asked

    def wait_applied(self, generation: int, timeout: float) -> bool:
        """Wait until the reader follows what ``want`` asked (a place let go is read by nobody
        from then on); False if the thread is stopped or the time ran out."""
        with self._applied_changed:
            return self._applied_changed.wait_for(
                lambda: self._applied >= generation or not self.is_alive(), timeout)

    def use(self, broker: Broker) -> None:
        """The broker as read again by the keeper: a changed connection setting opens the
        reader again."""
        if broker.config() != self.broker.config():
            with self._lock:
                self.broker = broker
                self._reopen = True
        else:
            self.broker = broker

    # -- the thread ----------------------------------------------------------------------------

    def run(self) -> None:
        followed: dict[PlaceRef, Held] = {}
        try:
            while not self.stopping.is_set():
                try:
                    followed = self._turn(followed)
                except BrokerError as exc:
                    followed = self._broker_failed(followed, exc.message)
                except Exception:  # noqa: BLE001 - one broker's trouble must not stop the keeper
                    # Not the broker's doing (a lost database connection, a deadlock): what the
                    # reader held goes back, and it reads again in a moment; the jobs say nothing.
                    log.exception("reading %s failed; reading again in %ss", self.broker, AFTER_ERROR_SECONDS)
                    self._close()
                    followed = {}
                    self.stopping.wait(AFTER_ERROR_SECONDS)
        finally:
            self._close()
            self._set_applied(self._asked)
            connection.close()

    def _turn(self, followed: dict[PlaceRef, Held]) -> dict[PlaceRef, Held]:
        close_old_connections()
        with self._lock:
            wanted = self._readable_now()
            generation, reopen, self._reopen = self._asked, self._reopen, False
        if self.reader is not None and not 0.5 < share(len(wanted)) / self.reader.per_place < 2:
            reopen = True  # its places' share changed twofold: what the broker sends ahead with it
        if reopen or not wanted:
            self._close()  # nothing to follow: no connection either
            followed = {}
        if not wanted:
            self._set_applied(generation)
            self.stopping.wait(TAKE_WAIT_SECONDS)
            return followed
        reader = self._reader(len(wanted))
        if wanted is not followed and wanted.keys() != followed.keys():
            refused = reader.follow(list(wanted))
            for ref, error in refused.items():
                self._failed(wanted.pop(ref), error.message)
            if self.failures:
                for held in wanted.values():
                    self._recovered(held)
                self.failures = 0
        followed = wanted
        self._set_applied(generation)
        taken = self._take(reader)
        if not taken:
            self._settle(followed)
            return followed
        # A place whose job ended meanwhile keeps its messages unacknowledged: it is let go at the
        # next turn, and they go back to the broker.
        kept = {ref: (followed[ref].place, job) for ref in taken if (job := followed[ref].job) is not None}
        taken = {ref: messages for ref, messages in taken.items() if ref in kept}
        with telemetry.span("keeper batch", {"dlo.keeper.places": len(taken)}):
            keep_taken(reader, taken, kept)
        now = time.monotonic()
        streams = []
        for ref, messages in taken.items():
            held = followed[ref]
            self._quiet_since[ref] = now
            if len(messages) >= reader.per_place:
                held.full_takes, held.full_letters = held.full_takes + 1, held.full_letters + len(messages)
            else:
                held.full_takes = held.full_letters = 0
            if held.full_takes >= 2 and held.full_letters >= STREAM_LETTERS:
                streams.append(ref)
        if streams:
            # Let go of them here first: their drain reads them alone.
            followed = {ref: held for ref, held in followed.items() if ref not in streams}
            reader.follow(list(followed))
            for ref in streams:
                held = wanted[ref]
                held.full_takes = held.full_letters = 0
                self._drain(held)
            with self._lock:
                self._readable_until = 0.0  # draining now: looked over again at the next turn
        return followed

    def _readable_now(self) -> dict[PlaceRef, Held]:
        """The places asked for that can be read now (``Held.readable``), looked over again when
        the keeper asks for others, and otherwise once every TAKE_WAIT_SECONDS (a drain that
        ended, a broker's pause run out), not at every turn: a turn over hundreds of places
        then costs what it takes. Called with the lock held."""
        now = time.monotonic()
        if self._readable_of != self._asked or now >= self._readable_until:
            readable = {ref: held for ref, held in self._wanted.items() if held.readable(now)}
            if readable.keys() != self._readable.keys() or any(
                    readable[ref] is not held for ref, held in self._readable.items()):
                self._readable = readable
            self._readable_of, self._readable_until = self._asked, now + TAKE_WAIT_SECONDS
        return self._readable

    def _take(self, reader: PlaceReader) -> dict[PlaceRef, list[Received]]:
        """What the reader hands over, waiting for the first letter, then LINGER_SECONDS for more:
        what died meanwhile is taken in one more call (a call per arrival would cost each
        letter a hop to the reader's connection and back)."""
        batch = settings.DLO_BATCH_SIZE
        taken = reader.take(batch, wait_seconds=TAKE_WAIT_SECONDS)
        count = sum(map(len, taken.values()))
        # No wait once a place gave its whole share: nothing more of it comes before the ack.
        if taken and count < batch and max(map(len, taken.values())) < reader.per_place:
            self.stopping.wait(LINGER_SECONDS)
            for ref, messages in reader.take(batch - count, wait_seconds=0).items():
                taken.setdefault(ref, []).extend(messages)
        return taken

    def _settle(self, followed: dict[PlaceRef, Held]) -> None:
        """Copies an interrupted capture committed, whose messages were acknowledged before their
        pending-ack rows went, are forgotten once the reader says nothing of the place is out."""
        now = time.monotonic()
        for ref, held in followed.items():
            if held.unsettled and now - self._quiet_since.get(ref, 0.0) >= SETTLE_AFTER_SECONDS:
                assert self.reader is not None
                if self.reader.settled(ref):
                    mark_place_acked(held.place)
                    held.unsettled = False
                self._quiet_since[ref] = now

    def _reader(self, places: int) -> PlaceReader:
        if self.reader is None:
            adapter = self.broker.adapter()
            adapter.__enter__()
            self._adapter = adapter
            self.reader = adapter.open_reader(per_place=share(places))
        return self.reader

    def _broker_failed(self, followed: dict[PlaceRef, Held], message: str) -> dict[PlaceRef, Held]:
        self._close()
        self.failures += 1
        pause = min(MAX_BACKOFF_SECONDS, 2.0 ** self.failures)
        log.warning("reading %s: %s (trying again in %.0fs)", self.broker, message, pause)
        with self._lock:
            wanted = list(self._wanted.values())
        for held in wanted:
            self._failed(held, message)
        self.stopping.wait(pause)
        return {}

    def _close(self) -> None:
        reader, adapter, self.reader, self._adapter = self.reader, self._adapter, None, None
        for closing in (reader, adapter):
            if closing is not None:
                try:
                    closing.close()
                except Exception:  # noqa: BLE001 - it is being thrown away; what it held goes back
                    pass

    def _set_applied(self, generation: int) -> None:
        with self._applied_changed:
            self._applied = generation
            self._applied_changed.notify_all()
