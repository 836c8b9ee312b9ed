"""The keeper: one process that keeps hundreds of dead places in custody (``manage.py keep``).

Its letters are taken as they die, by long-lived readers (console.jobs.automation.reading): a
thread per broker (or a few: DLO_KEEPER_CONNECTIONS) follows every place of that broker the
keeper holds, over one connection, and stores what arrives through the capture path. An idle
place costs a subscription, not a look every poll.

Every DLO_KEEPER_POLL_SECONDS the keeper's own round:

1. takes up the places whose ``keep_in_custody`` is on (console.services.keeping) and that it
   can lock: a PostgreSQL advisory lock per place, held by the keeper's own connection, all
   tried in one statement. So two keepers never read one place at once, and a keeper that dies
   (SIGKILL, a lost connection) lets go of its places with its connection; another one takes
   them up at its next round. A place is let go only once its reader no longer follows it;
2. gives each place it holds a keep job (console.jobs.kinds.keep), asked for through the one
   request path as ``system:keeper`` when the place has none, and follows that job: paused, the
   place is not read; cancelled, or keeping turned off, it ends and the place is let go;
3. tells each reading thread the places it follows;
4. marks every keep job it runs alive, in one statement every HEARTBEAT_SECONDS.

A round costs a few small statements whatever the number of places: the places kept and the
keep jobs are read again only when a digest of them (computed by PostgreSQL) changed, and a
job row only when its flags did.
"""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import psycopg
from django.conf import settings
from django.db import close_old_connections, connection
from django.utils import timezone

from console.brokers import BrokerError, PlaceRef
from console.jobs.automation.reading import DRAINED, Held, Reading
from console.jobs.control import Stop, advance, finish, note
from console.jobs.door.requests import request_job
from console.jobs.engines.capture import capture_pass
from console.models import Broker, DeadPlace, Job, PendingAck
from console.services.custody import settle
from console.services.jobs import JobError
from console.tracing import telemetry
from console.wording import counted

log = logging.getLogger(__name__)

#: Who asks for the keep jobs in the audit.
KEEPER_ACTOR = "system:keeper"
#: The first key of the keeper's advisory locks (the second is the place's id).
LOCK_CLASS = 0x4B454550  # "KEEP"
#: The longest pause before a place whose broker failed is read again.
MAX_BACKOFF_SECONDS = 30.0
#: How often the keeper marks the jobs it runs alive (what their pages show), and reads its
#: brokers' connection settings again.
HEARTBEAT_SECONDS = 5.0
#: How long letting go of a place waits for its reader to stop following it.
LET_GO_SECONDS = 60.0

_PLACES_DIGEST = f"""
SELECT count(*), md5(coalesce(string_agg(id::text, ',' ORDER BY id), ''))
  FROM {DeadPlace._meta.db_table} WHERE keep_in_custody AND NOT gone
"""
_JOBS_DIGEST = f"""
SELECT md5(coalesce(string_agg(concat_ws(':', id, place_id, status, cancel_requested, pause_requested), ','
                               ORDER BY id), ''))
  FROM {Job._meta.db_table} WHERE kind = 'keep' AND NOT (status = ANY(%s))
"""


class Keeper:
    def __init__(self, *, threads: int | None = None, poll_seconds: float | None = None,
                 slice_seconds: float | None = None) -> None:
        self.poll = settings.DLO_KEEPER_POLL_SECONDS if poll_seconds is None else poll_seconds
        self.slice = settings.DLO_KEEPER_SLICE_SECONDS if slice_seconds is None else slice_seconds
        self.connections = max(1, settings.DLO_KEEPER_CONNECTIONS)
        self.pool = ThreadPoolExecutor(max_workers=threads or settings.DLO_KEEPER_THREADS,
                                       thread_name_prefix="keeper-drain")
        self.held: dict[int, Held] = {}
        self.stopping = threading.Event()
        self.readings: dict[tuple[int, int], Reading] = {}  # (broker id, shard) -> its thread
        self._locks: psycopg.Connection | None = None
        self._wanted: dict[int, int] = {}  # place id -> broker id, as of _places_digest
        self._places_digest: tuple[int, str] | None = None
        self._jobs_digest: str | None = None
        self._next_heartbeat = 0.0

    # -- the loop ------------------------------------------------------------------------------

    def run(self) -> None:
        """Keep places until :meth:`stop` is called (from a signal handler or another thread)."""
        log.info("keeper started: a round every %ss, %s reader(s) per broker", self.poll, self.connections)
        try:
            while not self.stopping.is_set():
                started = time.monotonic()
                try:
                    # Traced while it keeps places; a keeper with none would send spans for nothing.
                    with telemetry.span("keeper round", quiet=not self.held) as span:
                        self.round()
                        span.set_attribute("dlo.keeper.places", len(self.held))
                except (psycopg.Error, Exception) as exc:  # noqa: BLE001 - the keeper outlives any one round
                    log.exception("keeper round failed: %s", exc)
                    self._let_go_of_everything()
                self.stopping.wait(max(0.0, self.poll - (time.monotonic() - started)))
        finally:
            self.stopping.set()
            self._let_go_of_everything()
            self.pool.shutdown(wait=True)

    def stop(self) -> None:
        self.stopping.set()

    def round(self) -> None:
        close_old_connections()
        self._check_locks()
        if self._places_changed():
            self._wanted = dict(DeadPlace.objects.filter(keep_in_custody=True, gone=False)
                                .values_list("pk", "broker_id"))
            self._let_go([pk for pk in self.held if pk not in self._wanted], why="keeping turned off")
        unheld = [pk for pk in self._wanted if pk not in self.held]
        new = self._lock(unheld) if unheld else []
        every_while = time.monotonic() >= self._next_heartbeat
        if new or every_while:
            # One Broker (and one decrypted password) each, read again now and then so a
            # changed connection setting reaches the readers and the drains.
            brokers = {broker.pk: broker for broker in Broker.objects.filter(pk__in=set(self._wanted.values()))}
            for place in DeadPlace.objects.filter(pk__in=new):
                self.held[place.pk] = Held(place)
            for held in self.held.values():
                held.place.broker = brokers[held.place.broker_id]
            for (broker_id, _), reading in self.readings.items():
                if broker_id in brokers:
                    reading.use(brokers[broker_id])
            self._find_unsettled()
        looked = self._follow_jobs(force=bool(new))
        if every_while:
            self._heartbeat()
            self._next_heartbeat = time.monotonic() + HEARTBEAT_SECONDS
        if new or looked or every_while:
            self._plan()

    def _places_changed(self) -> bool:
        with connection.cursor() as cursor:
            cursor.execute(_PLACES_DIGEST)
            count, md5 = cursor.fetchone()
        digest = (int(count), str(md5))
        changed = digest != self._places_digest
        self._places_digest = digest
        return changed

    # -- jobs ----------------------------------------------------------------------------------

    def _follow_jobs(self, *, force: bool) -> bool:
        """Each held place's keep job: asked for when there is none; ended or let be as its
        requested pause or cancel says. Read again only when the keep jobs' digest changed (or
        a place was taken up or lacks one); a job row is loaded again when its flags change.
        False when nothing was read again (so nothing changed)."""
        with connection.cursor() as cursor:
            cursor.execute(_JOBS_DIGEST, [list(Job.FINISHED)])
            (digest,) = cursor.fetchone()
        if not force and digest == self._jobs_digest and all(held.job is not None for held in self.held.values()):
            return False
        self._jobs_digest = digest
        flags = {row["place_id"]: row for row in Job.objects.filter(
            kind="keep", place_id__in=list(self.held)).exclude(status__in=Job.FINISHED)
            .order_by("id").values("id", "place_id", "status", "cancel_requested", "pause_requested")}
        stale = [row["id"] for place_id, row in flags.items()
                 if (job := self.held[place_id].job) is None or job.pk != row["id"] or job.status != row["status"]
                 or row["cancel_requested"] or row["pause_requested"]]
        loaded = Job.objects.defer("log").in_bulk(stale) if stale else {}
        for place_id, held in list(self.held.items()):
            row = flags.get(place_id)
            if row is None:
                held.job = self._ask_for_job(held.place)
                if held.job is None:
                    continue
                self._jobs_digest = None  # the new job changes it
                row = {"id": held.job.pk, "place_id": place_id, "status": held.job.status,
                       "cancel_requested": False, "pause_requested": False}
            elif row["id"] in loaded:
                held.job = loaded[row["id"]]
            job = held.job
            if job is None or held.draining is not None:
                continue  # a drain stops at its next batch by itself (console.jobs.control.checkpoint)
            if row["cancel_requested"]:
                finish(job, Job.Status.CANCELLED, f"cancelled after {counted(job.done, 'letter')}")
                held.job = None
            elif row["pause_requested"] and row["status"] != Job.Status.PAUSED:
                finish(job, Job.Status.PAUSED, f"paused after {counted(job.done, 'letter')}")
                job.status = Job.Status.PAUSED
            elif row["status"] == Job.Status.QUEUED:
                Job.objects.filter(pk=job.pk).update(status=Job.Status.RUNNING, heartbeat_at=timezone.now(),
                                                     started_at=job.started_at or timezone.now())
                job.status = Job.Status.RUNNING
        return True

    def _ask_for_job(self, place: DeadPlace) -> Job | None:
        try:
            return request_job("keep", place=place, actor=KEEPER_ACTOR,
                               reason=f"{place} is kept in custody: its letters are taken as they die")
        except JobError as exc:
            log.warning("keeping %s: %s", place, exc)
            return None

    def _heartbeat(self) -> None:
        """Mark the keep jobs alive in one statement. A job a reading thread is counting letters
        for at that moment is skipped, not waited for (its count marks it alive): the readers'
        transactions lock a few job rows each, and a statement locking hundreds in its own order
        while they do would deadlock with them."""
        running = [held.job.pk for held in self.held.values() if held.job is not None]
        if running:
            with connection.cursor() as cursor:
                cursor.execute(
                    f"UPDATE {Job._meta.db_table} SET heartbeat_at = %s WHERE id IN ("
                    f"SELECT id FROM {Job._meta.db_table} WHERE id = ANY(%s) AND status = ANY(%s) "
                    "FOR UPDATE SKIP LOCKED)",
                    [timezone.now(), running, [Job.Status.RUNNING, Job.Status.WAITING]])

    def _find_unsettled(self) -> None:
        """Places with copies committed but not known to be acknowledged (an interrupted
        capture's): their readers forget them once nothing of the place is out."""
        with connection.cursor() as cursor:  # the ids as one array: a thousand placeholders cost tens of ms
            cursor.execute(f"SELECT DISTINCT place_id FROM {PendingAck._meta.db_table} WHERE place_id = ANY(%s)",
                           [list(self.held)])
            for (place_id,) in cursor.fetchall():
                self.held[place_id].unsettled = True

    # -- reading -------------------------------------------------------------------------------

    def _plan(self) -> list[tuple[Reading, int]]:
        """Tell each reading thread the places it follows: those whose job runs, its share of
        its broker's; returns each thread with the generation to wait for."""
        wanted: dict[tuple[int, int], dict[PlaceRef, Held]] = {key: {} for key in self.readings}
        for held in self.held.values():
            if held.job is not None and held.job.status in DRAINED:
                key = (held.place.broker_id, held.place.pk % self.connections)
                wanted.setdefault(key, {})[held.ref] = held
        asked = []
        for key, places in wanted.items():
            reading = self.readings.get(key)
            if reading is None:
                if not places:
                    continue
                reading = self.readings[key] = Reading(
                    f"keeper-reader-{key[0]}-{key[1]}", next(iter(places.values())).place.broker, self.stopping,
                    failed=self._failed, recovered=self._recovered, drain=self._start_drain)
                reading.start()
            asked.append((reading, reading.want(places)))
        return asked

    def _start_drain(self, held: Held, *, again: bool = False) -> None:
        """Called by a reading thread for a place that keeps its share full: a drain of its own
        (or by a drain whose slice ran out: ``again``)."""
        if not again:
            held.stop.clear()
        try:
            held.draining = self.pool.submit(self._drain, held)
        except RuntimeError:  # the keeper is stopping: its pool takes nothing more
            held.draining = None
            return
        held.draining.add_done_callback(held.drained)

    def _drain(self, held: Held) -> None:
        """Capture a streaming place for at most one slice, or until it is empty or the keeper
        stops, in a reader process of its own (as a capture job reads), waiting a little for the
        next batch before it counts the place empty."""
        close_old_connections()
        job, place = held.job, held.place
        if job is None or held.stop.is_set():  # its job ended, or the place was let go, meanwhile
            return
        again = False
        try:
            with place.broker.adapter() as adapter:
                drained = capture_pass(
                    adapter, place, job=job, reason=job.reason, limit=lambda: 0 if held.stop.is_set() else None,
                    stored=lambda count: advance(job, done=count), until=time.monotonic() + self.slice,
                    wait_seconds=0.5, in_child=True,
                )
                if drained and settle(place, adapter):
                    held.unsettled = False
            self._recovered(held)
            # Its slice ran out with letters still coming: it queues up for another, behind
            # the drains waiting for a thread, instead of going back to its reader (which would
            # fill its share twice before handing it back to a new drain).
            again = not drained and not held.stop.is_set() and not self.stopping.is_set()
        except Stop as stop:
            finish(job, stop.status, f"{stop.status} by request after {counted(job.done, 'letter')}")
            job.status = stop.status
        except BrokerError as exc:
            self._failed(held, exc.message)
        except Exception:  # noqa: BLE001 - one place's trouble must not stop the others
            log.exception("keeping %s failed", place)
            self._failed(held, "internal error (see the keeper's log)")
        finally:
            connection.close()  # a drain thread's connection is not kept between slices
        if again:
            self._start_drain(held, again=True)

    def _failed(self, held: Held, message: str) -> None:
        """The place's broker did not answer, or refused it: read again after a growing pause,
        and its job says why (on the thread that saw it)."""
        held.failures += 1
        pause = min(MAX_BACKOFF_SECONDS, 2.0 ** held.failures)
        held.next_look = time.monotonic() + pause
        log.warning("keeping %s: %s (looking again in %.0fs)", held.place, message, pause)
        job = held.job
        if job is not None and (held.failures == 1 or job.error != message):
            note(job, f"broker unavailable, keeping on when it is back: {message}",
                 status=Job.Status.WAITING, error=message)
            job.status, job.error = Job.Status.WAITING, message

    def _recovered(self, held: Held) -> None:
        job = held.job
        if job is not None and (held.failures or job.status == Job.Status.WAITING):
            note(job, "broker is back, keeping on", status=Job.Status.RUNNING, error="")
            job.status, job.error = Job.Status.RUNNING, ""
        held.failures = 0

    # -- locks ---------------------------------------------------------------------------------

    def _connection(self) -> psycopg.Connection:
        if self._locks is None or self._locks.closed:
            db = connection.settings_dict
            self._locks = psycopg.connect(
                dbname=db["NAME"], user=db.get("USER") or None, password=db.get("PASSWORD") or None,
                host=db.get("HOST") or db.get("OPTIONS", {}).get("host") or None, port=db.get("PORT") or None,
                autocommit=True, application_name="dlo-keeper",
            )
        return self._locks

    def _lock(self, place_ids: list[int]) -> list[int]:
        """The places of these whose locks this keeper got, all tried in one statement."""
        rows = self._connection().execute(
            "SELECT id FROM unnest(%s::bigint[]) AS id WHERE pg_try_advisory_lock(%s, id::int)",
            [place_ids, LOCK_CLASS]).fetchall()
        return [row[0] for row in rows]

    def _check_locks(self) -> None:
        """The locks live as long as their connection: if it broke, every place is let go
        (another keeper may hold them now) before it is opened again."""
        if self._locks is None:
            return
        try:
            self._locks.execute("SELECT 1")
        except psycopg.Error:
            log.warning("the keeper's lock connection broke: letting go of every place")
            self._let_go_of_everything()

    def _let_go(self, place_ids: list[int], *, why: str) -> None:
        """Stop reading these places, end their jobs if keeping was turned off, then unlock them."""
        if not place_ids:
            return
        gone = [self.held.pop(place_id) for place_id in place_ids]
        for held in gone:
            held.stop.set()
        self._wait_for_readers()
        for held in gone:
            if held.draining is not None:
                held.draining.result()
            if held.job is not None and why == "keeping turned off":
                Job.objects.filter(pk=held.job.pk).exclude(status__in=Job.FINISHED).update(cancel_requested=True)
                finish(held.job, Job.Status.CANCELLED, f"{why} after {counted(held.job.done, 'letter')}")
        if self._locks is not None and not self._locks.closed:
            try:
                self._locks.execute("SELECT pg_advisory_unlock(%s, id::int) FROM unnest(%s::bigint[]) AS id",
                                    [LOCK_CLASS, place_ids])
            except psycopg.Error:
                pass  # the connection is gone, and its locks with it

    def _wait_for_readers(self) -> None:
        """Tell the readers what they follow now, and wait until they do."""
        for reading, generation in self._plan():
            if not reading.wait_applied(generation, LET_GO_SECONDS):
                log.warning("%s did not let go of its places within %ss", reading.name, LET_GO_SECONDS)

    def _let_go_of_everything(self) -> None:
        gone = list(self.held.values())
        for held in gone:
            held.stop.set()
        self.held.clear()
        if self.stopping.is_set():
            for reading in self.readings.values():
                reading.join(LET_GO_SECONDS)
            self.readings.clear()
        else:
            self._wait_for_readers()
        for held in gone:
            if held.draining is not None:
                try:
                    held.draining.result()
                except Exception:  # noqa: BLE001 - it was logged where it happened
                    pass
        self._places_digest = None
        self._jobs_digest = None
        if self._locks is not None:
            try:
                self._locks.close()
            except psycopg.Error:
                pass
            self._locks = None
