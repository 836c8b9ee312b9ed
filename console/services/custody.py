"""Taking captured messages into custody: store once, link returns to their replay."""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.utils import timezone

from console.access.actors import Actor
from console.brokers import Adapter, Received
from console.letters.rows import REPLAY_ID_HEADER, Arrival, prepared  # noqa: F401 - the header is named here too
from console.models import DeadLetter, DeadPlace, Job, PendingAck, UniqueDeath
from console.notifications.events import listened, notify
from console.services import audit, group_keys, safeguards
from console.services.copy_insert import copy_insert
from console.services.search_rows import write_new_decoded_texts

_REPLAY_IDS = uuid.UUID("6f1d2a52-8c1e-4c0e-9a43-3d1f0b6c9e70")
_REPLAY_NAMESPACE = _REPLAY_IDS.bytes


def replay_id(job_id: int, letter_id: int) -> str:
    """The replay id a letter gets from the job that first publishes it, the same on every
    run of that job. A letter in custody keeps it across jobs until it is confirmed
    (console.jobs.engines.publish); a replay from the archive is a new intent and uses its own job's."""
    digest = bytearray(hashlib.sha1(_REPLAY_NAMESPACE + f"{job_id}:{letter_id}".encode()).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x50  # uuid5's version and variant, as uuid.uuid5 sets them
    digest[8] = (digest[8] & 0x3F) | 0x80
    return digest.hex()


@dataclass(frozen=True)
class Stored:
    """What a batch became in custody: new letters, and redelivered copies matched to letters
    an interrupted capture had stored already (stored once), or deaths told again matched to
    their letters (counted when first stored). ``taken_over`` counts the matched
    letters another capture (or none) had stored: the job that finishes them counts them,
    while those it stored itself before its worker died were counted then."""

    new: list[int]
    matched: list[int]
    taken_over: int = 0

    @property
    def ids(self) -> list[int]:
        return self.new + self.matched

    @property
    def counted(self) -> int:
        return len(self.new) + self.taken_over


@dataclass(frozen=True)
class PreparedBatch:
    """A batch made ready for custody without touching the database (so a capture can make
    the next batch ready while PostgreSQL stores this one, or its reader process makes it):
    each message's arrival and the columns of its letter, custody key included
    (console.letters.rows)."""

    items: list[Arrival]
    rows: list[dict[str, Any]]

    def __len__(self) -> int:
        return len(self.items)


def fixed_columns(place: DeadPlace, job: Job | None) -> dict[str, Any]:
    """The columns every letter of a place's batch shares."""
    return {"place_id": place.pk, "broker_id": place.broker_id, "capture_job_id": job.pk if job is not None else None}


def prepare_batch(place: DeadPlace, batch: Sequence[Received], job: Job | None) -> PreparedBatch:
    return PreparedBatch(*prepared(batch, fixed_columns(place, job)))


def store_captured(
    place: DeadPlace, batch: Sequence[Received], *, job: Job | None, actor: Actor, reason: str = ""
) -> Stored:
    """Commit a batch of captured messages; the caller acks them on the broker afterwards."""
    return store_prepared(place, prepare_batch(place, batch, job), job=job, actor=actor, reason=reason)


@dataclass(frozen=True)
class PlaceBatch:
    """One place's prepared batch, with the job that took it and who is audited for it."""

    place: DeadPlace
    batch: PreparedBatch
    job: Job | None
    actor: Actor
    reason: str = ""


@transaction.atomic(savepoint=False)  # inside a capture's batch transaction: no savepoint round trips
def store_prepared(place: DeadPlace, batch: PreparedBatch, *, job: Job | None, actor: Actor,
                   reason: str = "") -> Stored:
    """Commit a prepared batch; the caller acks its messages on the broker afterwards
    (``store_many`` of one place)."""
    return store_many([PlaceBatch(place, batch, job, actor, reason)])[0]


@transaction.atomic(savepoint=False)
def store_many(batches: Sequence[PlaceBatch]) -> list[Stored]:
    """Commit prepared batches of several places at once (the keeper's readers take a few
    letters of many places at a time); the caller acks their messages on the broker afterwards.
    What each place's batch became, in order.

    A redelivered message whose copy was committed but never acked (a crash between the two)
    matches that copy instead of being stored twice; so does a death its broker names once
    (``Received.once``), told again however much later (``UniqueDeath``). Letters carrying our replay id header
    are linked to the letter whose replay they are, and counted against that job. The letters
    of all the batches go in one COPY, their pending acks in one statement and their audit
    events in one chain step (an event per place), so a letter trickling into each of many
    places costs a few statements for all, not a few each.
    """
    pending, stored_by = _pending_copies(batches)
    deaths = _unique_deaths(batches)
    fresh_of: list[list[tuple[dict[str, Any], Arrival]]] = []
    matched_of: list[list[int]] = []
    again_of: list[list[int]] = []  # letters of deaths told again: stored and counted before
    twins: list[tuple[int, tuple[int, str]]] = []  # (batch, death) told twice within these batches
    told: set[tuple[int, str]] = set()
    for number, entry in enumerate(batches):
        fresh: list[tuple[dict[str, Any], Arrival]] = []
        matched: list[int] = []
        again: list[int] = []
        for item, row in zip(entry.batch.items, entry.batch.rows, strict=True):
            death = (entry.place.pk, row["custody_key"])
            copies = pending.get(death) if item.redelivered else None
            if copies:
                matched.append(copies.pop(0))
            elif item.once and death in deaths:
                again.append(deaths[death])
            elif item.once and death in told:
                twins.append((number, death))
            else:
                fresh.append((row, item))
                if item.once:
                    told.add(death)
        fresh_of.append(fresh)
        matched_of.append(matched)
        again_of.append(again)

    now = timezone.now()
    every_fresh = [pair for fresh in fresh_of for pair in fresh]
    rows = [row for row, _ in every_fresh]
    counts, on_ladder = _link_returns(every_fresh)
    safeguards.mark_returns(rows, counts, now, on_ladder=on_ladder)
    new_ids = copy_insert(DeadLetter, rows)
    write_new_decoded_texts(new_ids, rows)  # a compressed letter is searched decoded
    _await_ack(new_ids, [row["place_id"] for row in rows], [row["custody_key"] for row in rows])
    if told:
        kept = _keep_unique_deaths(new_ids, every_fresh)
        for number, death in twins:
            again_of[number].append(kept[death])

    stored: list[Stored] = []
    arrived: list[tuple[DeadPlace, list[dict[str, Any]], list[int]]] = []
    start = 0
    for entry, fresh, matched, again in zip(batches, fresh_of, matched_of, again_of, strict=True):
        ids = new_ids[start:start + len(fresh)]
        start += len(fresh)
        job_id = entry.job.pk if entry.job is not None else None
        stored.append(Stored(ids, matched + again, taken_over=sum(1 for i in matched
                                                                  if job_id is None or stored_by[i] != job_id)))
        if ids:
            arrived.append((entry.place, [row for row, _ in fresh], ids))
    audit.record_many([
        audit.Event("capture", actor=entry.actor, reason=entry.reason, job=entry.job, place=entry.place,
                    letter_ids=result.new, outcome="stored",
                    details={"already_in_custody": len(result.matched)} if result.matched else None)
        for entry, result in zip(batches, stored, strict=True) if result.new])
    for place, place_rows, ids in arrived:
        safeguards.audit_quarantined(place, place_rows, ids)
    safeguards.note_arrivals_of_places(arrived, now, on_ladder=on_ladder)
    _tell_new_groups(arrived)
    return stored


def _pending_copies(batches: Sequence[PlaceBatch]) -> tuple[dict[tuple[int, str], list[int]], dict[int, int | None]]:
    """Copies committed but not acked that the batches' redelivered messages may match: by
    place and custody key, the letters (oldest first); and the job that stored each."""
    places, keys = _asked(batches, lambda item: item.redelivered)
    pending: dict[tuple[int, str], list[int]] = {}
    stored_by: dict[int, int | None] = {}
    if places:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT p.letter_id, p.place_id, p.custody_key, l.capture_job_id FROM {PendingAck._meta.db_table} p "
                f"JOIN {DeadLetter._meta.db_table} l ON l.id = p.letter_id "
                "WHERE (p.place_id, p.custody_key) IN (SELECT * FROM unnest(%s::bigint[], %s::varchar[])) "
                "ORDER BY p.letter_id", [places, keys])
            for letter_id, place_id, key, capture_job in cursor.fetchall():
                pending.setdefault((place_id, key), []).append(letter_id)
                stored_by[letter_id] = capture_job
    return pending, stored_by


def _asked(batches: Sequence[PlaceBatch], picked: Callable[[Arrival], bool]) -> tuple[list[int], list[str]]:
    """(places, custody keys) of the batches' messages that ``picked`` takes, each once: the
    arrays a look-up by place and custody key is sent as."""
    wanted = {(entry.place.pk, row["custody_key"]) for entry in batches
              for item, row in zip(entry.batch.items, entry.batch.rows, strict=True) if picked(item)}
    return [place for place, _ in wanted], [key for _, key in wanted]


def _unique_deaths(batches: Sequence[PlaceBatch]) -> dict[tuple[int, str], int]:
    """The letters in custody of the deaths the batches' ``once`` messages tell, by place and
    custody key."""
    places, keys = _asked(batches, lambda item: item.once)
    found: dict[tuple[int, str], int] = {}
    if places:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT d.letter_id, d.place_id, d.custody_key FROM {UniqueDeath._meta.db_table} d "
                f"JOIN {DeadLetter._meta.db_table} l ON l.id = d.letter_id "
                "WHERE (d.place_id, d.custody_key) IN (SELECT * FROM unnest(%s::bigint[], %s::varchar[]))",
                [places, keys])
            for letter_id, place_id, key in cursor.fetchall():
                found[(place_id, key)] = letter_id
    return found


def _keep_unique_deaths(new_ids: list[int], fresh: list[tuple[dict[str, Any], Arrival]]) -> dict[tuple[int, str], int]:
    """Keep the deaths of the new letters whose broker names them once; returns each death's
    letter. A death whose letter is gone (deleted) now names the new one. A capture storing the
    same death at this moment fails here and rolls back: its messages, not acknowledged, come
    back and match this letter."""
    kept = {(row["place_id"], row["custody_key"]): letter_id
            for letter_id, (row, item) in zip(new_ids, fresh, strict=True) if item.once}
    table, letters = UniqueDeath._meta.db_table, DeadLetter._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {table} AS d (letter_id, place_id, custody_key) "
            "SELECT unnest(%s::bigint[]), unnest(%s::bigint[]), unnest(%s::varchar[]) "
            "ON CONFLICT (place_id, custody_key) DO UPDATE SET letter_id = EXCLUDED.letter_id "
            f"WHERE NOT EXISTS (SELECT 1 FROM {letters} l WHERE l.id = d.letter_id) RETURNING 1",
            [list(kept.values()), [place for place, _ in kept], [key for _, key in kept]])
        if len(cursor.fetchall()) != len(kept):
            raise IntegrityError("another capture stored one of these deaths at the same moment")
    return kept


def _link_returns(fresh: list[tuple[dict[str, Any], Arrival]]) -> tuple[dict[int, int], set[int]]:
    """Letters carrying our replay id header point to the letter whose replay they are;
    returns each linked parent's ``replay_count``, and the parents replayed as a try of a
    rule's retry ladder (console.jobs.automation.rules_at_work)."""
    by_replay_id: dict[str, list[dict[str, Any]]] = {}
    for row, item in fresh:
        if item.replay_id:
            by_replay_id.setdefault(item.replay_id, []).append(row)
    if not by_replay_id:
        return {}, set()
    parents = list(DeadLetter.objects.filter(replay_id__in=list(by_replay_id))
                   .values("id", "replay_id", "last_job_id", "replay_count", "handling__action"))
    for parent in parents:
        for row in by_replay_id[parent["replay_id"]]:
            row["parent_id"] = parent["id"]
        if parent["last_job_id"]:
            Job.objects.filter(id=parent["last_job_id"]).update(
                returned=F("returned") + len(by_replay_id[parent["replay_id"]])
            )
    return ({parent["id"]: parent["replay_count"] for parent in parents},
            {parent["id"] for parent in parents if parent["handling__action"] == "retry"})


def _tell_new_groups(arrived: Sequence[tuple[DeadPlace, list[dict[str, Any]], list[int]]]) -> None:
    """A failure group whose first letters are in this batch is new: those who subscribed hear
    of it once (a storm of its letters in later batches finds the earlier ones). Two queries
    for all the places' letters, and only while someone listens for new groups."""
    if not arrived or not listened("group.new"):
        return
    first: dict[str, tuple[DeadPlace, dict[str, Any]]] = {}
    for place, rows, _ in arrived:
        for row, later in zip(rows, group_keys.keyed_later(rows), strict=True):
            if row["fingerprint"] and not later:  # a body's value splits its group: told once read
                first.setdefault(row["fingerprint"], (place, row))
    if not first:
        return
    oldest = min(min(ids) for _, _, ids in arrived)
    seen = set(DeadLetter.objects.filter(fingerprint__in=list(first), id__lt=oldest)
               .values_list("fingerprint", flat=True).distinct())
    for fingerprint, (place, row) in first.items():
        if fingerprint not in seen:
            notify("group.new", key=f"group:{fingerprint}", place=place,
                   subject=f"a new failure group in {place}: {row['exception_type'] or row['reason']}",
                   details={"fingerprint": fingerprint, "origin": row["origin_queue"],
                            "exception_type": row["exception_type"], "exception_message": row["exception_message"],
                            "reason": row["reason"]})


def _await_ack(letter_ids: list[int], place_ids: list[int], keys: list[str]) -> None:
    if not letter_ids:
        return
    with connection.cursor() as cursor:
        cursor.execute(
            f"INSERT INTO {PendingAck._meta.db_table} (letter_id, place_id, custody_key) "
            "SELECT unnest(%s::bigint[]), unnest(%s::bigint[]), unnest(%s::varchar[])",
            [letter_ids, place_ids, keys],
        )


def mark_acked(letter_ids: Sequence[int]) -> None:
    """The broker has been told to drop these letters' messages."""
    if letter_ids:
        with connection.cursor() as cursor:
            cursor.execute(f"DELETE FROM {PendingAck._meta.db_table} WHERE letter_id = ANY(%s)", [list(letter_ids)])


def settle(place: DeadPlace, adapter: Adapter) -> bool:
    """After a capture drained the place: copies an interrupted capture committed, whose
    messages were acknowledged after all, are forgotten once the broker says nothing of the
    place is out (``Adapter.settled``). True when no copy is left pending."""
    if not PendingAck.objects.filter(place=place).exists():
        return True
    if adapter.settled(place.ref):
        mark_place_acked(place)
        return True
    return False


def mark_place_acked(place: DeadPlace) -> None:
    """Nothing is left unacknowledged in the place's queue (a capture drained it): copies
    committed by an interrupted capture whose redelivery never came were acked after all."""
    PendingAck.objects.filter(place=place).delete()
