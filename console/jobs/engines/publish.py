"""Replay and move: publish letters with the broker's confirms, then record the outcome.

Each batch goes through three steps:
1. the letters are taken: each gets a flight (console.models.LetterFlight: this job and a
   replay id, the letter's own if it had one), committed, while its row stays ``held`` and
   untouched but for a row lock;
2. they are published with confirms (console.jobs.engines.senders, on worker threads);
3. confirmed letters become ``replayed`` (the one write of a letter's row a replay makes) and
   their flights go; the others are released (their flights go, they stay ``held``); the audit
   row is written in that same transaction.

Batches overlap so that PostgreSQL and the broker work at the same time: while the broker
confirms one batch, the next one is already handed to the publisher (a publisher process
publishes it right behind), this thread records the batch before, and a second thread (with
a PostgreSQL connection of its own) marks the one after. So at most two batches are published
but not yet recorded; a crash leaves them in flight under this job (with the batch taken
but not sent), and resuming publishes them again with the same replay ids (at most
2 x DLO_BATCH_SIZE duplicates, each carrying the replay id of its letter, so a consumer can
drop it). A job that stops for any other reason (pause, cancel, an error) first records what
the broker confirmed and releases every letter it did not confirm; a job that ends without
doing so (its worker died, then it was cancelled) has its flights released by the database
(migration 0040).
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeVar

from django.conf import settings
from django.db import connection, connections, transaction
from django.db.models import QuerySet
from django.utils import timezone

from console.brokers.publication import Publication
from console.jobs.control import Throttle, advance, checkpoint
from console.jobs.engines.returns import Pacing, ReturnWatch
from console.jobs.engines.senders import Outcome, Senders, Sending
from console.models import DeadLetter, DeadPlace, Job, LetterFlight, LetterState
from console.services import audit, rule_inbox
from console.services.custody import replay_id
from console.services.selection import resolve
from console.wording import counted

MAX_BATCH_BYTES = 64 * 1024 * 1024

#: A letter as a take reads it first: id, body size.
_Row = tuple[int, int]
T = TypeVar("T")


@dataclass(frozen=True)
class Publishing:
    """Where a job's letters go and what the audit calls publishing each one, as the job's kind
    declares them (console.jobs.kinds.base.JobKind.publishes_to and audited_as)."""

    audited_as: str
    target: str = ""  # the queue chosen for them; "" sends each letter to the subscription it died in

    def destination(self, letter: Flying) -> str:
        return self.target or letter.origin_queue


class Flying(NamedTuple):
    """What publishing one letter needs, and nothing more (no model instance; a tuple, made
    a thousand at a time)."""

    id: int
    place_id: int
    broker_id: int
    origin_queue: str
    replay_id: str
    headers: str  # tagged JSON text, as custody keeps it (decoded where it is published)
    properties: str
    body: bytes


@dataclass
class Flight:
    """One batch from marking to recording."""

    letters: list[Flying]
    skipped: int
    cursor: int
    refused: dict[int, str] = field(default_factory=dict)  # refused before anything was sent
    sending: Sending | None = None  # the Senders' handle while the broker has it


def run_publish(job: Job, pace: Pacing, to: Publishing) -> str:
    """Publish the job's letters at its ``pace`` (console.jobs.kinds.pace) where ``to`` says."""
    throttle = Throttle(pace.rate_limit)
    watch = ReturnWatch(job, pace)
    places = PlaceCache()
    marked: Flight | None = None  # taken into flight, not sent yet
    flying: Flight | None = None  # sent, not recorded yet

    def room(*in_air: Flight | None) -> int:
        return watch.room(throttle.batch_size(settings.DLO_BATCH_SIZE),
                          in_air=sum(len(flight.letters) for flight in in_air if flight is not None))

    with Senders(job, pace.concurrency) as senders, Taker(job) as taker:
        sent: Flight | None = None  # sent behind the flight before it, not recorded yet
        try:
            while True:
                checkpoint(job)
                taker.start(room(flying))
                marked = taker.result()
                if marked is not None:
                    # Out now, behind the flight still waiting for its confirms (a publisher
                    # process publishes it as soon as that one is through).
                    _send(to, marked, senders, places)
                    sent, marked = marked, None
                results = senders.wait(flying.sending) if flying is not None else None
                landing, flying, sent = flying, sent, None
                if flying is not None:
                    taker.start(room(flying, landing))  # marked while the landing is recorded
                if landing is not None:
                    _record_outcome(job, to, landing, results, places)
                    watch.saw(landing_places(landing))
                    watch.after_batch()
                if flying is not None:
                    throttle.wait(len(flying.letters) + flying.skipped)
                elif taker.exhausted:
                    break  # nothing left to take, nothing in the air
                else:
                    watch.judge_canary()
        except BaseException:
            _land_after_stop(job, to, [marked, taker.abandon()], [flying, sent], senders, places)
            raise
    verb = f"moved to {to.target}" if to.target else "replayed"
    return f"{counted(job.done, 'letter')} {verb}, {job.failed} not confirmed, {job.skipped} skipped{watch.summary()}"


class Taker:
    """Takes the job's batches in id order, one ahead: each is taken into flight on a thread
    with a PostgreSQL connection of its own while the job's thread records the batch before.

    Inside a transaction of the caller's, batches are taken on the caller's thread instead:
    another connection would not see that transaction's letters.
    """

    def __init__(self, job: Job) -> None:
        self.job = job
        self.source = resolve(job.selection).order_by("id")
        self.cursor = job.cursor
        self.exhausted = False  # a take found nothing after the cursor
        self._taking: Future[Flight | None] | None = None
        self._thread = None if connection.in_atomic_block else ThreadPoolExecutor(
            max_workers=1, thread_name_prefix=f"job{job.pk}-take")

    def __enter__(self) -> Taker:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._thread is not None:
            self._thread.submit(connections.close_all)  # the thread's own connection
            self._thread.shutdown(wait=True)

    def start(self, room: int) -> None:
        """Start taking up to ``room`` letters, unless a take is under way or the end was seen."""
        if self._taking is None and room and not self.exhausted:
            self._taking = self._run(_take, self.job, self.source, self.cursor, room)

    def result(self) -> Flight | None:
        """The batch the last :meth:`start` took, waiting for it; None if none was started or
        none was left."""
        taking, self._taking = self._taking, None
        if taking is None:
            return None
        flight: Flight | None = taking.result()
        if flight is None:
            self.exhausted = True
        else:
            self.cursor = flight.cursor
        return flight

    def abandon(self) -> Flight | None:
        """The job is stopping: the batch a take under way marked, to be handed back."""
        try:
            return self.result()
        except Exception:
            return None  # its transaction rolled back: nothing was marked

    def _run(self, function: Callable[..., T], *args: Any) -> Future[T]:
        if self._thread is not None:
            return self._thread.submit(function, *args)
        done: Future[T] = Future()
        try:
            done.set_result(function(*args))
        except BaseException as exc:
            done.set_exception(exc)
        return done


def landing_places(flight: Flight) -> set[int]:
    return {letter.place_id for letter in flight.letters}


def _take(job: Job, source: QuerySet[DeadLetter], cursor: int, room: int) -> Flight | None:
    """The next batch after ``cursor``, its held letters taken into flight; None at the end."""
    taken = list(source.filter(id__gt=cursor).values_list("id", "body_size")[:room])
    if not taken:
        return None
    rows = _within_bytes(taken)
    letters = _take_into_flight(job, [letter_id for letter_id, _ in rows])
    return Flight(letters=letters, skipped=len(rows) - len(letters), cursor=rows[-1][0])


def _within_bytes(rows: Sequence[_Row]) -> Sequence[_Row]:
    """Keep a batch's bodies under MAX_BATCH_BYTES (always at least one letter)."""
    total = 0
    for index, row in enumerate(rows):
        total += row[1]
        if total > MAX_BATCH_BYTES and index > 0:
            return rows[:index]
    return rows


# The letters still held among ``ids``, locked (a purge, a mark-failed or an edit waits for
# the commit, then sees the flight and leaves the letter alone), and their flights: a new one,
# or this job's own that a crash left (resumed with its replay id). A flight of another job
# keeps its letter out. The letter row is read, not written.
_TAKE_SQL = f"""
    WITH letter AS (
        SELECT id, place_id, broker_id, origin_queue, replay_id, headers, properties, body
          FROM {DeadLetter._meta.db_table}
         WHERE id = ANY(%(ids)s::bigint[]) AND state = %(held)s
           FOR UPDATE
    ), flight AS (
        INSERT INTO {LetterFlight._meta.db_table} AS flight (letter_id, job_id, replay_id)
        SELECT letter.id, %(job)s, CASE WHEN letter.replay_id = '' THEN fresh.replay_id ELSE letter.replay_id END
          FROM letter JOIN unnest(%(ids)s::bigint[], %(replay_ids)s::text[]) AS fresh(id, replay_id)
            ON fresh.id = letter.id
        ON CONFLICT (letter_id) DO UPDATE SET job_id = flight.job_id WHERE flight.job_id = %(job)s
        RETURNING flight.letter_id, flight.replay_id
    )
    SELECT letter.id, letter.place_id, letter.broker_id, letter.origin_queue, flight.replay_id, letter.headers,
           letter.properties, letter.body
      FROM letter JOIN flight ON flight.letter_id = letter.id
     ORDER BY letter.id
"""


# The confirmed letters of this job's flights become ``replayed`` (replayed_to: where each
# went, as Publishing.destination says: the chosen queue of a move, or the letter's origin
# queue for a replay); their flights go.
_RECORD_SQL = f"""
    WITH landed AS (
        DELETE FROM {LetterFlight._meta.db_table}
         WHERE letter_id = ANY(%(ids)s::bigint[]) AND job_id = %(job)s
        RETURNING letter_id, replay_id
    )
    UPDATE {DeadLetter._meta.db_table} AS letter
       SET state = %(replayed)s, replayed_at = %(now)s, state_changed_at = %(now)s, last_job_id = %(job)s,
           replay_id = landed.replay_id, replayed_to = COALESCE(NULLIF(%(target)s, ''), letter.origin_queue)
      FROM landed
     WHERE letter.id = landed.letter_id
"""


# This job's flights of ``ids`` go: their letters, still held, keep the replay id (a later
# replay carries the same one, so a consumer can tell a copy it may have had); the released
# ids come back, for the rules to decide again (console.services.rule_inbox). Migration 0040's
# trigger does the same for whatever flights a job still has when it ends.
_RELEASE_SQL = f"""
    WITH released AS (
        DELETE FROM {LetterFlight._meta.db_table}
         WHERE letter_id = ANY(%(ids)s::bigint[]) AND job_id = %(job)s
        RETURNING letter_id, replay_id
    ), kept AS (
        UPDATE {DeadLetter._meta.db_table} AS letter SET replay_id = released.replay_id
          FROM released
         WHERE letter.id = released.letter_id AND letter.replay_id = ''
    )
    SELECT letter_id FROM released
"""


def array_text(values: list[Any]) -> str:
    """A list of ids (or replay ids, hex) as PostgreSQL's array literal: one parameter that
    PostgreSQL parses, not a thousand that the driver and the planner handle one by one."""
    return "{" + ",".join(map(str, values)) + "}"


def _take_into_flight(job: Job, ids: list[int]) -> list[Flying]:
    """Take the batch's held letters into flight under this job and read what publishing
    needs, in one statement; a letter keeps its replay id across retries and jobs until it is
    confirmed (console.services.custody.replay_id)."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(_TAKE_SQL, {"held": LetterState.HELD, "job": job.pk, "ids": array_text(ids),
                                   "replay_ids": array_text([replay_id(job.pk, letter_id) for letter_id in ids])})
        rows = cursor.fetchall()
    return [Flying(row[0], row[1], row[2], row[3], row[4], _text(row[5]), _text(row[6]), bytes(row[7] or b""))
            for row in rows]


def _text(value: Any) -> str:
    """A JSON column as text (Django's connection hands jsonb over undecoded)."""
    return value if isinstance(value, str) else json.dumps(value or {})


def _send(to: Publishing, flight: Flight, senders: Senders, places: PlaceCache) -> None:
    """Hand the flight to the broker(s); letters without a destination are refused here."""
    by_broker: dict[int, list[Publication]] = defaultdict(list)
    for letter in flight.letters:
        destination = to.destination(letter)
        if not destination:
            flight.refused[letter.id] = "origin unknown: move it to a chosen queue instead"
            continue
        by_broker[letter.broker_id].append(Publication(
            letter.id, destination, places.get(letter.place_id).scope, letter.body, letter.headers,
            letter.properties, letter.replay_id))
    flight.sending = senders.send(by_broker)


def _record_outcome(job: Job, to: Publishing, flight: Flight, results: Outcome | None, places: PlaceCache) -> None:
    """Commit the flight's outcome with one audit row per dead place the letters came from."""
    confirmed_ids, refused = results if results is not None else ([], {})
    refused = {**flight.refused, **refused}
    by_id = {letter.id: letter for letter in flight.letters}
    confirmed = [by_id[key] for key in confirmed_ids if key in by_id]
    now = timezone.now()
    with transaction.atomic():
        if confirmed:
            with connection.cursor() as cursor:
                cursor.execute(_RECORD_SQL, {"replayed": LetterState.REPLAYED, "now": now, "target": to.target,
                                             "job": job.pk, "ids": array_text([letter.id for letter in confirmed])})
            for place_id, letters in _by_place(confirmed).items():
                destinations = sorted({to.destination(letter) for letter in letters})
                audit.record(to.audited_as, actor=job.actor_name, reason=job.reason, ticket=job.ticket, job=job,
                             place=places.get(place_id), target=", ".join(destinations)[:500],
                             letter_ids=[letter.id for letter in letters], outcome="confirmed")
        if refused:
            _release(job, list(refused))
            for place_id, letters in _by_place([by_id[i] for i in refused if i in by_id]).items():
                errors = sorted({refused[letter.id] for letter in letters})
                audit.record(to.audited_as, actor=job.actor_name, reason=job.reason, ticket=job.ticket, job=job,
                             place=places.get(place_id), letter_ids=[letter.id for letter in letters],
                             outcome="failed", details={"errors": errors[:20]})
            row = Job.objects.select_for_update().get(pk=job.pk)
            for message in sorted(set(refused.values()))[:5]:
                row.add_log(f"not confirmed: {message}")
            row.save(update_fields=["log"])
        advance(job, done=len(confirmed), failed=len(refused), skipped=flight.skipped, cursor=flight.cursor)


def _release(job: Job, ids: list[int]) -> None:
    """Hand letters the broker did not take (or was never given) back: still held, no flight."""
    if ids:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(_RELEASE_SQL, {"job": job.pk, "ids": array_text(ids)})
            rule_inbox.put(letter_id for (letter_id,) in cursor.fetchall())


def _land_after_stop(job: Job, to: Publishing, unsent: list[Flight | None], in_air: list[Flight | None],
                     senders: Senders, places: PlaceCache) -> None:
    """The loop is stopping: record what the broker confirmed, hand back what it did not and
    what was marked but never sent."""
    for flying in in_air:
        if flying is None:
            continue
        try:
            _record_outcome(job, to, flying, senders.wait(flying.sending, retry=False), places)
        except Exception:
            # Whether the broker has them is unknown: held again, they may be replayed twice
            # (with the same replay id), never lost.
            _release(job, [letter.id for letter in flying.letters])
    for flight in unsent:
        if flight is not None:
            _release(job, [letter.id for letter in flight.letters])


def _by_place(letters: list[Flying]) -> dict[int, list[Flying]]:
    grouped: dict[int, list[Flying]] = defaultdict(list)
    for letter in letters:
        grouped[letter.place_id].append(letter)
    return grouped


class PlaceCache:
    """Dead places (with their brokers) by id, read once per job."""

    def __init__(self) -> None:
        self._places: dict[int, DeadPlace] = {}

    def get(self, place_id: int) -> DeadPlace:
        if place_id not in self._places:
            self._places[place_id] = DeadPlace.objects.select_related("broker").get(pk=place_id)
        return self._places[place_id]
