"""Writing and verifying the hash-chained audit."""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import User
from django.db import connection, transaction
from django.db.models import F, Func, GenericIPAddressField, JSONField, QuerySet
from django.utils import timezone

from console.access.actors import Actor
from console.context import source_ip, via
from console.models import AuditEvent, AuditEventPlace, Broker, DeadLetter, DeadPlace, Job
from console.services.copy_insert import copy_insert
from console.services.selection import SelectionError, resolve

GENESIS = "0" * 64
_CHAIN_LOCK = 0x444C4F41  # any constant: serialises writers of the chain until they commit


def actor_name(actor: Actor) -> str:
    if isinstance(actor, str):
        return actor
    return actor.get_username()


def actor_user(actor: Actor) -> User | None:
    return None if isinstance(actor, str) else actor


@dataclass
class Event:
    """One event to append to the chain (``record_many``)."""

    action: str
    actor: Actor
    reason: str = ""
    ticket: str = ""
    job: Job | int | None = None
    broker: Broker | None = None
    place: DeadPlace | None = None
    target: str = ""
    letter_ids: Iterable[int] = ()
    count: int | None = None
    outcome: str = ""
    details: dict[str, Any] | None = None


def record(
    action: str,
    *,
    actor: Actor,
    reason: str = "",
    ticket: str = "",
    job: Job | int | None = None,
    broker: Broker | None = None,
    place: DeadPlace | None = None,
    target: str = "",
    letter_ids: Iterable[int] = (),
    count: int | None = None,
    outcome: str = "",
    details: dict[str, Any] | None = None,
) -> AuditEvent:
    """Append one event to the chain. Must run inside the transaction of the change."""
    return record_many([Event(action, actor, reason, ticket, job, broker, place, target, letter_ids, count,
                              outcome, details)])[0]


def record_many(events: Iterable[Event]) -> list[AuditEvent]:
    """Append events to the chain, in order, in one step: the chain's lock and its last hash
    read once, the events and the places they concern inserted in one statement each. Must
    run inside the transaction of the changes."""
    wanted = list(events)
    if not wanted:
        return []
    if not connection.in_atomic_block:
        raise RuntimeError("audit.record must run inside the transaction of the change it records")
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_CHAIN_LOCK])
        cursor.execute(f"SELECT hash FROM {AuditEvent._meta.db_table} ORDER BY id DESC LIMIT 1")
        last = cursor.fetchone()
    prev = last[0] if last else GENESIS
    at = timezone.now()
    ip, way_in = source_ip.get(), via.get()
    made: list[tuple[AuditEvent, list[tuple[int, int | None]]]] = []
    for wanted_event in wanted:
        ids = sorted(wanted_event.letter_ids)
        place = wanted_event.place
        broker = place.broker if place is not None and wanted_event.broker is None else wanted_event.broker
        event = AuditEvent(
            at=at,
            actor_name=actor_name(wanted_event.actor),
            action=wanted_event.action,
            reason=wanted_event.reason,
            ticket=wanted_event.ticket,
            job_id=getattr(wanted_event.job, "pk", wanted_event.job),
            broker_name=broker.name if broker is not None else "",
            place_name=str(place.name) if place is not None else "",
            target=wanted_event.target,
            letter_ids=ids,
            count=len(ids) if wanted_event.count is None else wanted_event.count,
            outcome=wanted_event.outcome,
            details={**(wanted_event.details or {}), "via": way_in} if way_in else (wanted_event.details or {}),
            source_ip=ip,
            prev_hash=prev,
        )
        event.hash = prev = event.compute_hash()
        where = sorted(concerns(broker=broker, place=place, job=wanted_event.job, letter_ids=ids),
                       key=lambda pair: (pair[0], pair[1] or 0))
        made.append((event, where))
    # The events and the places they concern inserted without the model machinery per row
    # (console.services.copy_insert), which a take of letters of many places pays for each place.
    event_ids = copy_insert(AuditEvent, [_row(event) for event, _ in made])
    for (event, _), event_id in zip(made, event_ids, strict=True):
        event.pk = event_id
        event._state.adding = False
    copy_insert(AuditEventPlace, [{"event_id": event.pk, "broker_id": broker_id, "place_id": place_id}
                                  for event, where in made for broker_id, place_id in where])
    return [event for event, _ in made]


def _row(event: AuditEvent) -> dict[str, Any]:
    """An event's columns as copy_insert takes them: JSON as text, an address as one."""
    row: dict[str, Any] = {}
    for column in AuditEvent._meta.concrete_fields:
        if column.primary_key:
            continue
        value = getattr(event, column.attname)
        if isinstance(column, JSONField):
            value = json.dumps(value, cls=column.encoder)
        elif isinstance(column, GenericIPAddressField) and value:
            value = ipaddress.ip_address(value)
        row[column.attname] = value
    return row


#: (broker id, place id or None for the whole broker)
Concern = tuple[int, int | None]


def concerns(*, broker: Broker | None = None, place: DeadPlace | None = None, job: Job | int | None = None,
             letter_ids: Iterable[int] = ()) -> set[Concern]:
    """The brokers and places an event concerns, by id, which is what scoped reads go by
    (console.access.scope.visible): the place it names; else the places of the letters it
    names; else its job's; else the broker it names, as a whole; else nothing, and only users
    without limits see it."""
    if place is not None:
        return {(place.broker_id, place.pk)}
    ids = list(letter_ids)
    if ids:
        found: set[Concern] = set(DeadLetter.objects.filter(id__in=ids).order_by()
                                  .values_list("broker_id", "place_id").distinct())
        if found:
            return found
    if job is not None:
        found = job_concerns(job)
        if found:
            return found
    if broker is not None:
        return {(broker.pk, None)}
    return set()


def job_concerns(job: Job | int) -> set[Concern]:
    """Where a job acts: its place; else the places its request counted; else (a job asked
    for before those were kept) where its earlier events said it acts, or the places of the
    letters its selection names."""
    if not isinstance(job, Job):
        loaded = Job.objects.filter(pk=job).first()
        if loaded is None:
            return set()
        job = loaded
    if job.place is not None:
        return {(job.place.broker_id, job.place_id)}
    if job.per_place:  # what the job's request counted, per place (console.jobs.door.requests)
        return set(DeadPlace.objects.filter(pk__in=[int(pk) for pk in job.per_place]).values_list("broker_id", "pk"))
    earlier = set(AuditEventPlace.objects.filter(event__job_id=job.pk).order_by()
                  .values_list("broker_id", "place_id").distinct())
    if earlier:
        return earlier
    try:
        letters = resolve(job.selection or {})
    except SelectionError:
        return set()  # not a selection of letters in custody (an archive replay): concerns no place
    return set(letters.order_by().values_list("broker_id", "place_id").distinct())


@dataclass
class ChainReport:
    checked: int
    broken_at: int | None = None
    problem: str = ""

    @property
    def ok(self) -> bool:
        return self.broken_at is None


def verify_chain(batch_size: int = 5000) -> ChainReport:
    """Walk the chain in id order; name the first event whose hash or link does not hold."""
    prev = GENESIS
    checked = 0
    last_id = 0
    while True:
        with transaction.atomic():
            events = list(AuditEvent.objects.filter(id__gt=last_id).order_by("id")[:batch_size])
        if not events:
            return ChainReport(checked)
        for event in events:
            if event.prev_hash != prev:
                return ChainReport(checked, event.id, "its link to the previous event does not match")
            if event.compute_hash() != event.hash:
                return ChainReport(checked, event.id, "its content does not match its hash")
            prev = event.hash
            checked += 1
            last_id = event.id


def letters_of(job: Job) -> QuerySet[DeadLetter]:
    """The letters a job acted on: those its audit rows name (one query, in the database)."""
    named = (AuditEvent.objects.filter(job_id=job.pk).annotate(letter=Func(F("letter_ids"), function="unnest"))
             .values("letter"))
    return DeadLetter.objects.filter(id__in=named)
