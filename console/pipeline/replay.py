"""Replay from the archive: republish letters kept in the lake to the subscription each one
died in, as a Job (kind ``archive_replay``) with progress, pause, cancel and resume like any.

The selection (day range, origin, exception type, fingerprint) is frozen with the lake's
letters watermark, so the job acts on what was archived when it was asked for. It goes
partition by partition (day, broker, place, in that order; letters by id inside), publishes
in batches with the broker's confirms at the job's rate limit, and writes one audit row per
batch and dead place. ``cursor`` counts the letters handled in that fixed order, so a resumed
job goes on where it stopped; the replay id of a letter is derived from the job and the letter,
so a batch published again after a crash carries the same ids and consumers can drop it.

Letters still held (or replaying) in custody are skipped: replay those from custody. Letters
whose body retention erased are skipped too.
"""

from __future__ import annotations

import json
import uuid
from collections import defaultdict
from collections.abc import Iterator
from datetime import date
from typing import Any

from django.conf import settings
from django.db import transaction
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from console.brokers import Outgoing
from console.brokers.values import from_json
from console.jobs.control import Throttle, advance, checkpoint, note
from console.jobs.senders import publish_confirmed
from console.models import Broker, DeadLetter, DeadPlace, Job, LetterState
from console.pipeline import lake as lakefs
from console.pipeline.archive import watermark
from console.pipeline.schema import BODIES, LETTERS, SCHEMAS
from console.pipeline.session import get_spark
from console.services import audit
from console.services.audit import Actor, actor_name, actor_user
from console.services.custody import REPLAY_ID_HEADER
from console.services.jobs import JobError

CRITERIA = ("origin", "exception", "fingerprint")
_REPLAY_IDS = uuid.UUID("6f1d2a52-8c1e-4c0e-9a43-3d1f0b6c9e70")


def replay_id(job_id: int, letter_id: int) -> str:
    """The same letter in the same job always carries the same replay id."""
    return uuid.uuid5(_REPLAY_IDS, f"{job_id}:{letter_id}").hex


def _day(value: str | None, name: str) -> str | None:
    if not value:
        return None
    try:
        return date.fromisoformat(value).isoformat()
    except ValueError:
        raise JobError(f"{name} must be a day, YYYY-MM-DD; got {value!r}") from None


@transaction.atomic
def do_archive_replay(*, actor: Actor, reason: str, lake: str | None = None, since: str | None = None,
                      until: str | None = None, origin: str = "", exception: str = "", fingerprint: str = "",
                      ticket: str = "", rate_limit: int | None = None, enqueue: bool = True) -> Job:
    """Ask for a replay of archived letters: days ``since``..``until`` (inclusive, UTC) and/or
    an origin subscription, exception type or failure group. Queued for the worker unless
    ``enqueue`` is false (the caller runs it)."""
    reason = (reason or "").strip()
    if not reason:
        raise JobError("a reason is required")
    if rate_limit is not None and rate_limit < 1:
        raise JobError("rate_limit must be at least 1 letter per second")
    lake = lakefs.lake_url(lake)
    selection: dict[str, Any] = {"lake": lake, "since": _day(since, "since"), "until": _day(until, "until")}
    selection.update({key: value for key, value in zip(CRITERIA, (origin, exception, fingerprint)) if value})
    if selection["since"] and selection["until"] and selection["since"] > selection["until"]:
        raise JobError("since must not be after until")
    if not any(selection.get(key) for key in ("since", "until", *CRITERIA)):
        raise JobError("choose days, an origin, an exception or a group: not the whole archive at once")
    selection["max_id"] = watermark(lake, LETTERS)
    if not selection["max_id"]:
        raise JobError(f"nothing has been archived to {lake} yet")
    job = Job.objects.create(kind=Job.Kind.ARCHIVE_REPLAY, actor=actor_user(actor), actor_name=actor_name(actor),
                             reason=reason, ticket=ticket, selection=selection, rate_limit=rate_limit)
    audit.record("job.requested", actor=actor, reason=reason, ticket=ticket, job=job,
                 details={"kind": job.kind, "selection": selection, "rate_limit": rate_limit})
    if enqueue:
        from console.jobs.tasks import run_job

        transaction.on_commit(lambda: run_job.delay(job.pk))
    return job


def selected_letters(spark: SparkSession, selection: dict[str, Any]) -> DataFrame:
    """The archived letters a frozen selection names, each with its body (null once erased)."""
    letters = lakefs.read(spark, selection["lake"], LETTERS, SCHEMAS[LETTERS])
    letters = letters.where(F.col("id") <= selection["max_id"])
    if selection.get("since"):
        letters = letters.where(F.col("day") >= F.lit(selection["since"]).cast("date"))
    if selection.get("until"):
        letters = letters.where(F.col("day") <= F.lit(selection["until"]).cast("date"))
    if selection.get("origin"):
        letters = letters.where(F.col("origin_queue") == selection["origin"])
    if selection.get("exception"):
        letters = letters.where(F.col("exception_type") == selection["exception"])
    if selection.get("fingerprint"):
        letters = letters.where(F.col("fingerprint") == selection["fingerprint"])
    bodies = lakefs.read(spark, selection["lake"], BODIES, SCHEMAS[BODIES]).select(
        F.col("sha256").alias("body_sha256"), "body")
    return letters.select(
        "day", "broker", "place", "id", "broker_id", "place_scope", "origin_queue", "headers", "properties",
        "body_sha256",
    ).join(bodies, on="body_sha256", how="left")


def run_archive_replay(job: Job) -> str:
    """The job runner's entry for ``archive_replay`` (see console.jobs.runner)."""
    spark = get_spark()
    letters = selected_letters(spark, job.selection).cache()
    try:
        if not job.total:
            total = letters.count()
            Job.objects.filter(pk=job.pk).update(total=total, expected=total)
            job.total = job.expected = total
        throttle = Throttle(job.rate_limit)
        adapters: dict[int, Any] = {}
        try:
            for batch, position in _batches(letters, job.cursor, throttle.batch_size(settings.DLO_BATCH_SIZE)):
                checkpoint(job)
                _replay_batch(job, batch, adapters, cursor=position)
                throttle.wait(len(batch))
        finally:
            for adapter in adapters.values():
                adapter.close()
    finally:
        letters.unpersist()
    return f"{job.done} archived letters replayed, {job.failed} not confirmed, {job.skipped} skipped"


def _batches(letters: DataFrame, cursor: int, size: int) -> Iterator[tuple[list, int]]:
    """(batch, position after it) in partition order, starting after ``cursor`` letters."""
    partitions = letters.select("day", "broker", "place").distinct().orderBy("day", "broker", "place").collect()
    position = 0
    for part in partitions:
        in_part = letters.where(
            (F.col("day") == part.day) & F.col("broker").eqNullSafe(part.broker) & (F.col("place") == part.place))
        count = in_part.count()
        if position + count <= cursor:
            position += count
            continue
        batch: list = []
        for row in in_part.orderBy("id").toLocalIterator():
            position += 1
            if position <= cursor:
                continue
            batch.append(row)
            if len(batch) == size:
                yield batch, position
                batch = []
        if batch:
            yield batch, position


def _replay_batch(job: Job, batch: list, adapters: dict, *, cursor: int) -> None:
    in_custody = set(DeadLetter.objects.filter(id__in=[row.id for row in batch],
                                               state__in=(LetterState.HELD, LetterState.REPLAYING))
                     .values_list("id", flat=True))
    sendable = [row for row in batch if row.id not in in_custody and row.body is not None]
    skipped = len(batch) - len(sendable)
    refused: dict[int, str] = {}
    confirmed: list = []
    by_broker: dict[int, list] = defaultdict(list)
    for row in sendable:
        if row.origin_queue:
            by_broker[row.broker_id].append(row)
        else:
            refused[row.id] = "origin unknown"
    for broker_id, rows in by_broker.items():
        broker = Broker.objects.filter(pk=broker_id).first()
        if broker is None:
            refused.update({row.id: "the broker is no longer configured" for row in rows})
            continue
        if broker_id not in adapters:
            adapters[broker_id] = broker.adapter()
        outgoing = [
            Outgoing(key=row.id, destination=row.origin_queue, scope=row.place_scope or "", body=bytes(row.body),
                     headers={**from_json(json.loads(row.headers or "{}")), REPLAY_ID_HEADER: replay_id(job.pk, row.id)},
                     properties=from_json(json.loads(row.properties or "{}")))
            for row in rows
        ]
        ok, not_ok = publish_confirmed(job, adapters[broker_id], outgoing)
        by_id = {row.id: row for row in rows}
        confirmed.extend(by_id[key] for key in ok)
        refused.update(not_ok)
    if skipped:
        note(job, f"{skipped} skipped: still held in custody (replay them there) or body erased")
    _record(job, confirmed, [row for row in sendable if row.id in refused], refused,
            skipped=skipped, cursor=cursor)


def _record(job: Job, confirmed: list, refused_rows: list, errors: dict[int, str], *, skipped: int,
            cursor: int) -> None:
    """One audit row per dead place and outcome, with the job's counters, in one transaction."""
    with transaction.atomic():
        for outcome, rows in (("confirmed", confirmed), ("refused", refused_rows)):
            by_place: dict[tuple, list] = defaultdict(list)
            for row in rows:
                by_place[(row.broker_id, row.place, str(row.day))].append(row)
            for (broker_id, place_id, day), letters in by_place.items():
                place = DeadPlace.objects.select_related("broker").filter(pk=place_id).first()
                details: dict[str, Any] = {"lake": job.selection["lake"], "partition": f"{day}/{place_id}"}
                if outcome == "refused":
                    details["errors"] = sorted({errors[row.id] for row in letters})[:20]
                audit.record(job.kind, actor=job.actor_name, reason=job.reason, ticket=job.ticket, job=job,
                             broker=Broker.objects.filter(pk=broker_id).first() if place is None else None,
                             place=place, letter_ids=[row.id for row in letters], outcome=outcome,
                             target=", ".join(sorted({row.origin_queue for row in letters}))[:500]
                             if outcome == "confirmed" else "", details=details)
        advance(job, done=len(confirmed), failed=len(refused_rows), skipped=skipped, cursor=cursor)
