"""The keeper: one process that keeps hundreds of dead places in custody (``manage.py keep``).

Every DLO_KEEPER_POLL_SECONDS it:

1. takes up the places whose ``keep_in_custody`` is on (console.services.keeping) and that it
   can lock: a PostgreSQL advisory lock per place, held by the keeper's own connection. So two
   keepers never drain one place at once, and a keeper that dies (SIGKILL, a lost connection)
   lets go of its places with its connection; another one takes them up within a poll;
2. gives each place it holds a keep job (console.jobs.kinds.keep), asked for through the one
   request path as ``system:keeper`` when the place has none, and follows that job: paused, it
   is not drained; cancelled, or keeping turned off, it ends and the place is let go;
3. asks each broker, once for all its idle places, how many messages wait in them
   (``depths``), and drains each place that holds some (or cannot tell) on a thread of a
   small pool, for at most DLO_KEEPER_SLICE_SECONDS at a time, through the capture path every
   capture takes (console.jobs.engines.capture.capture_pass: committed before acknowledged, stored
   once). A place that keeps filling is drained again at the next poll;
4. marks every keep job it runs alive, in one statement every HEARTBEAT_SECONDS.

What a round costs is kept small, since it runs twice a second over hundreds of places: the
places and job flags are read as plain values, a job row is loaded again only when its flags
change, each broker is loaded once (its password decrypted once), and the depth checks go over
one connection per broker kept from round to round.

A place whose broker does not answer is looked at again after a growing pause (at most
MAX_BACKOFF_SECONDS); its job says why (status ``waiting``) until the broker is back.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field

import psycopg
from django.conf import settings
from django.db import close_old_connections, connection
from django.utils import timezone

from console.brokers import Adapter, BrokerConfig, BrokerError
from console.jobs.control import Stop, advance, finish, note
from console.jobs.door.requests import request_job
from console.jobs.engines.capture import capture_pass
from console.models import Broker, DeadPlace, Job
from console.services.custody import mark_place_acked
from console.services.jobs import JobError
from console.tracing import telemetry
from console.wording import counted

log = logging.getLogger(__name__)

#: Who asks for the keep jobs in the audit.
KEEPER_ACTOR = "system:keeper"
#: The first key of the keeper's advisory locks (the second is the place's id).
LOCK_CLASS = 0x4B454550  # "KEEP"
#: The longest pause before a place whose broker failed is looked at again.
MAX_BACKOFF_SECONDS = 30.0
#: Above this many waiting messages a place is drained through a reader process of its own
#: (console.brokers.capture_process); below it, starting one costs more than reading them here.
STREAM_DEPTH = 500
#: How often the keeper marks the jobs it runs alive (what their pages show).
HEARTBEAT_SECONDS = 5.0
#: Statuses of a keep job the keeper drains.
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

    def drained(self, _: Future[None]) -> None:
        """Called back when its drain ends (on the drain's thread): it may be drained again."""
        self.draining = None


class Keeper:
    def __init__(self, *, threads: int | None = None, poll_seconds: float | None = None,
                 slice_seconds: float | None = None) -> None:
        self.poll = settings.DLO_KEEPER_POLL_SECONDS if poll_seconds is None else poll_seconds
        self.slice = settings.DLO_KEEPER_SLICE_SECONDS if slice_seconds is None else slice_seconds
        self.pool = ThreadPoolExecutor(max_workers=threads or settings.DLO_KEEPER_THREADS,
                                       thread_name_prefix="keeper-drain")
        self.held: dict[int, Held] = {}
        self.stopping = threading.Event()
        self._locks: psycopg.Connection | None = None
        self._adapters: dict[int, tuple[BrokerConfig, Adapter]] = {}  # broker id -> (its config, its open adapter)
        self._next_heartbeat = 0.0

    # -- the loop ------------------------------------------------------------------------------

    def run(self) -> None:
        """Keep places until :meth:`stop` is called (from a signal handler or another thread)."""
        log.info("keeper started: polling every %ss with %s drain threads", self.poll, self.pool._max_workers)
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
            self._let_go_of_everything()
            self.pool.shutdown(wait=True)

    def stop(self) -> None:
        self.stopping.set()

    def round(self) -> None:
        close_old_connections()
        self._check_locks()
        wanted = dict(DeadPlace.objects.filter(keep_in_custody=True, gone=False).values_list("pk", "broker_id"))
        for place_id in [pk for pk in self.held if pk not in wanted]:
            self._let_go(place_id, why="keeping turned off")
        new = [place_id for place_id in wanted if place_id not in self.held and self._lock(place_id)]
        every_while = time.monotonic() >= self._next_heartbeat
        if new or every_while:
            # One Broker (and one decrypted password) each, read again now and then so a
            # changed connection setting reaches the drains and the depth checks.
            brokers = {broker.pk: broker for broker in Broker.objects.filter(pk__in=set(wanted.values()))}
            for place in DeadPlace.objects.filter(pk__in=new):
                self.held[place.pk] = Held(place)
            for held in self.held.values():
                held.place.broker = brokers[held.place.broker_id]
        self._follow_jobs()
        if every_while:
            self._heartbeat()
            self._next_heartbeat = time.monotonic() + HEARTBEAT_SECONDS
        self._look_and_drain()

    # -- jobs ----------------------------------------------------------------------------------

    def _follow_jobs(self) -> None:
        """Each held place's keep job: asked for when there is none; ended or let be as its
        requested pause or cancel says. Only the flags are read each round; the job row is
        loaded again when they change."""
        flags = {row["place_id"]: row for row in Job.objects.filter(
            kind="keep", place_id__in=list(self.held)).exclude(status__in=Job.FINISHED)
            .order_by("id").values("id", "place_id", "status", "cancel_requested", "pause_requested")}
        for place_id, held in list(self.held.items()):
            row = flags.get(place_id)
            if row is None:
                held.job = self._ask_for_job(held.place)
                if held.job is None:
                    continue
                row = {"id": held.job.pk, "place_id": place_id, "status": held.job.status,
                       "cancel_requested": False, "pause_requested": False}
            elif (held.job is None or held.job.pk != row["id"] or held.job.status != row["status"]
                  or row["cancel_requested"] or row["pause_requested"]):
                held.job = Job.objects.defer("log").get(pk=row["id"])
            if held.draining is not None:
                continue  # a drain stops at its next batch by itself (console.jobs.control.checkpoint)
            job = held.job
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

    def _ask_for_job(self, place: DeadPlace) -> Job | None:
        try:
            return request_job("keep", place=place, actor=KEEPER_ACTOR,
                               reason=f"{place} is kept in custody: its letters are taken as they die")
        except JobError as exc:
            log.warning("keeping %s: %s", place, exc)
            return None

    def _heartbeat(self) -> None:
        running = [held.job.pk for held in self.held.values() if held.job is not None]
        if running:
            Job.objects.filter(pk__in=running, status__in=(Job.Status.RUNNING, Job.Status.WAITING)).update(
                heartbeat_at=timezone.now())

    # -- draining ------------------------------------------------------------------------------

    def _look_and_drain(self) -> None:
        now = time.monotonic()
        idle = [held for held in self.held.values()
                if held.draining is None and held.job is not None and held.job.status in DRAINED
                and held.next_look <= now]
        by_broker: dict[int, list[Held]] = {}
        for held in idle:
            by_broker.setdefault(held.place.broker_id, []).append(held)
        for group in by_broker.values():
            for held, depth in self._depths(group):
                if depth != 0:
                    held.stop.clear()
                    held.draining = self.pool.submit(self._drain, held, depth)
                    held.draining.add_done_callback(held.drained)

    def _depths(self, group: list[Held]) -> Iterable[tuple[Held, int | None]]:
        """How many messages wait in each place of one broker, asked over a connection kept
        from round to round; a broker that does not answer backs its places off (and says so
        on their jobs), and they are not drained now."""
        broker = group[0].place.broker
        try:
            depths = self._adapter(broker).depths([held.place.ref for held in group])
        except (BrokerError, ValueError) as exc:
            self._close_adapter(broker.pk)
            message = exc.message if isinstance(exc, BrokerError) else str(exc)
            for held in group:
                self._failed(held, message)
            return []
        return [(held, depths.get(held.place.ref)) for held in group]

    def _adapter(self, broker: Broker) -> Adapter:
        """The broker's adapter for the depth checks, opened once (again after an error or a
        change of its connection settings)."""
        config = broker.config()
        kept = self._adapters.get(broker.pk)
        if kept is not None and kept[0] != config:
            self._close_adapter(broker.pk)
            kept = None
        if kept is None:
            adapter = broker.adapter()
            adapter.__enter__()
            kept = self._adapters[broker.pk] = (config, adapter)
        return kept[1]

    def _close_adapter(self, broker_id: int) -> None:
        kept = self._adapters.pop(broker_id, None)
        if kept is not None:
            try:
                kept[1].__exit__(None, None, None)
            except Exception:  # noqa: BLE001 - it is being thrown away
                pass

    def _drain(self, held: Held, depth: int | None) -> None:
        """Capture the place for at most one slice, or until it is empty or the keeper stops.
        A few letters are read here; a place that holds more than STREAM_DEPTH (a stream of
        deaths, or a backlog) is read in a child process, as a capture job reads, and waits a
        little longer for the next batch before it counts the place empty."""
        close_old_connections()
        job, place = held.job, held.place
        if job is None:  # its job ended while this drain waited for a thread: the next round asks for one
            return
        stream = depth is None or depth > STREAM_DEPTH
        try:
            with place.broker.adapter() as adapter:
                drained = capture_pass(
                    adapter, place, job=job, reason=job.reason, limit=lambda: 0 if held.stop.is_set() else None,
                    stored=lambda count: advance(job, done=count), until=time.monotonic() + self.slice,
                    wait_seconds=0.5 if stream else 0.05, in_child=stream,
                )
                if drained:
                    mark_place_acked(place)
            if held.failures or job.status == Job.Status.WAITING:
                note(job, "broker is back, keeping on", status=Job.Status.RUNNING, error="")
                job.status = Job.Status.RUNNING
            held.failures = 0
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

    def _failed(self, held: Held, message: str) -> None:
        held.failures += 1
        pause = min(MAX_BACKOFF_SECONDS, 2.0 ** held.failures)
        held.next_look = time.monotonic() + pause
        log.warning("keeping %s: %s (looking again in %.0fs)", held.place, message, pause)
        if held.job is not None and (held.failures == 1 or held.job.error != message):
            note(held.job, f"broker unavailable, keeping on when it is back: {message}",
                 status=Job.Status.WAITING, error=message)
            held.job.status, held.job.error = Job.Status.WAITING, message

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

    def _lock(self, place_id: int) -> bool:
        row = self._connection().execute("SELECT pg_try_advisory_lock(%s, %s)", [LOCK_CLASS, place_id]).fetchone()
        return row is not None and bool(row[0])

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

    def _let_go(self, place_id: int, *, why: str) -> None:
        held = self.held.pop(place_id)
        held.stop.set()
        if held.draining is not None:
            held.draining.result()
        if held.job is not None and why == "keeping turned off":
            Job.objects.filter(pk=held.job.pk).exclude(status__in=Job.FINISHED).update(cancel_requested=True)
            finish(held.job, Job.Status.CANCELLED, f"{why} after {counted(held.job.done, 'letter')}")
        if self._locks is not None and not self._locks.closed:
            try:
                self._locks.execute("SELECT pg_advisory_unlock(%s, %s)", [LOCK_CLASS, place_id])
            except psycopg.Error:
                pass  # the connection is gone, and its locks with it

    def _let_go_of_everything(self) -> None:
        for held in self.held.values():
            held.stop.set()
        for held in list(self.held.values()):
            if held.draining is not None:
                try:
                    held.draining.result()
                except Exception:  # noqa: BLE001 - it was logged where it happened
                    pass
        self.held.clear()
        for broker_id in list(self._adapters):
            self._close_adapter(broker_id)
        if self._locks is not None:
            try:
                self._locks.close()
            except psycopg.Error:
                pass
            self._locks = None
