"""Replay and move: publish letters with the broker's confirms, then record the outcome.

Each batch goes through three steps, each its own transaction or broker call:
1. the letters become ``replaying`` with a replay id (kept if they had one), committed;
2. they are published with confirms;
3. confirmed letters become ``replayed``, the others go back to ``held``; the audit row is
   written in that same transaction.
A crash between 1 and 3 leaves the batch ``replaying`` under this job: resuming publishes it
again with the same replay ids, so a consumer can drop the duplicates.
"""

from __future__ import annotations

from collections import defaultdict

from django.conf import settings
from django.db import transaction
from django.db.models import Case, CharField, F, Func, UUIDField, Value, When
from django.db.models.functions import Cast, Replace
from django.utils import timezone

from console.brokers import Outgoing
from console.brokers.values import from_json
from console.jobs.control import Throttle, advance, checkpoint, with_broker_retry
from console.models import Broker, DeadLetter, Job, LetterState
from console.services import audit
from console.services.custody import REPLAY_ID_HEADER
from console.services.selection import resolve

MAX_BATCH_BYTES = 64 * 1024 * 1024
#: 32 hex digits, like uuid4().hex, made by PostgreSQL (13+) in the UPDATE itself.
NEW_REPLAY_ID = Replace(Cast(Func(function="gen_random_uuid", output_field=UUIDField()), CharField()),
                        Value("-"), Value(""))


def run_publish(job: Job) -> str:
    letters = resolve(job.selection).order_by("id")
    throttle = Throttle(job.rate_limit)
    adapters: dict[int, object] = {}
    try:
        while True:
            checkpoint(job)
            rows = list(
                letters.filter(id__gt=job.cursor).values_list("id", "body_size", "state", "last_job_id")[
                    : throttle.batch_size(settings.DLO_BATCH_SIZE)
                ]
            )
            if not rows:
                break
            rows = _within_bytes(rows)
            eligible = [
                letter_id for letter_id, _, state, last_job in rows
                if state == LetterState.HELD or (state == LetterState.REPLAYING and last_job == job.pk)
            ]
            batch = _mark_replaying(job, eligible)
            confirmed, refused = _publish(job, batch, adapters)
            _record_outcome(job, batch, confirmed, refused, skipped=len(rows) - len(batch), cursor=rows[-1][0])
            throttle.wait(len(rows))
    finally:
        for adapter in adapters.values():
            adapter.close()
    verb = "replayed" if job.kind == Job.Kind.REPLAY else f"moved to {job.target}"
    return f"{job.done} letters {verb}, {job.failed} not confirmed, {job.skipped} skipped"


def _within_bytes(rows: list[tuple]) -> list[tuple]:
    """Keep a batch's bodies under MAX_BATCH_BYTES (always at least one letter)."""
    total = 0
    for index, row in enumerate(rows):
        total += row[1]
        if total > MAX_BATCH_BYTES and index > 0:
            return rows[:index]
    return rows


def _mark_replaying(job: Job, ids: list[int]) -> list[DeadLetter]:
    """Mark the batch ``replaying`` under this job in one UPDATE, giving a replay id to each
    letter that has none (a letter keeps its id across retries), and load it for publishing."""
    with transaction.atomic():
        DeadLetter.objects.filter(id__in=ids, state__in=(LetterState.HELD, LetterState.REPLAYING)).update(
            state=LetterState.REPLAYING, last_job=job, state_changed_at=timezone.now(),
            replay_id=Case(When(replay_id="", then=NEW_REPLAY_ID), default=F("replay_id")),
        )
        return list(
            DeadLetter.objects.select_related("place__broker")
            .filter(id__in=ids, state=LetterState.REPLAYING, last_job=job)
            .order_by("id")
        )


def _destination(job: Job, letter: DeadLetter) -> str:
    return job.target if job.kind == Job.Kind.MOVE else letter.origin_queue


def _publish(job: Job, batch: list[DeadLetter], adapters: dict) -> tuple[list[DeadLetter], dict[int, str]]:
    confirmed: list[DeadLetter] = []
    refused: dict[int, str] = {}
    by_broker: dict[int, list[DeadLetter]] = defaultdict(list)
    for letter in batch:
        if not _destination(job, letter):
            refused[letter.id] = "origin unknown: move it to a chosen queue instead"
        else:
            by_broker[letter.broker_id].append(letter)
    for broker_id, letters in by_broker.items():
        if broker_id not in adapters:
            adapters[broker_id] = Broker.objects.get(pk=broker_id).adapter()
        adapter = adapters[broker_id]
        outgoing = [
            Outgoing(
                key=letter.id,
                destination=_destination(job, letter),
                scope=letter.place.scope,
                body=letter.body_bytes,
                headers={**from_json(letter.headers), REPLAY_ID_HEADER: letter.replay_id},
                properties=from_json(letter.properties),
            )
            for letter in letters
        ]
        ok, not_ok = publish_confirmed(job, adapter, outgoing)
        by_id = {letter.id: letter for letter in letters}
        confirmed.extend(by_id[key] for key in ok)
        refused.update(not_ok)
    return confirmed, refused


def publish_confirmed(job: Job, adapter, outgoing: list[Outgoing]) -> tuple[list, dict]:
    """Publish with the broker's confirms, waiting out an outage (status ``waiting``).

    Returns the keys the broker confirmed, and the refused ones with the broker's reason.
    """
    results = with_broker_retry(job, lambda: adapter.publish(outgoing, window=settings.DLO_BATCH_SIZE))
    confirmed = [result.key for result in results if result.ok]
    refused = {result.key: result.error or "not confirmed by the broker" for result in results if not result.ok}
    return confirmed, refused


def _record_outcome(job, batch, confirmed, refused, *, skipped: int, cursor: int) -> None:
    """Commit the batch's outcome with one audit row per dead place the letters came from."""
    now = timezone.now()
    by_id = {letter.id: letter for letter in batch}
    with transaction.atomic():
        ok_ids = [letter.id for letter in confirmed]
        if ok_ids:
            DeadLetter.objects.filter(id__in=ok_ids).update(
                state=LetterState.REPLAYED, replayed_at=now, state_changed_at=now,
                replayed_to=job.target if job.kind == Job.Kind.MOVE else "",
            )
            for place, letters in _by_place(confirmed).items():
                destinations = sorted({_destination(job, letter) for letter in letters})
                audit.record(job.kind, actor=job.actor_name, reason=job.reason, ticket=job.ticket, job=job,
                             place=place, target=", ".join(destinations)[:500],
                             letter_ids=[letter.id for letter in letters], outcome="confirmed")
        if refused:
            DeadLetter.objects.filter(id__in=list(refused)).update(state=LetterState.HELD, state_changed_at=now)
            for place, letters in _by_place([by_id[i] for i in refused]).items():
                errors = sorted({refused[letter.id] for letter in letters})
                audit.record(job.kind, actor=job.actor_name, reason=job.reason, ticket=job.ticket, job=job,
                             place=place, letter_ids=[letter.id for letter in letters], outcome="refused",
                             details={"errors": errors[:20]})
            row = Job.objects.select_for_update().get(pk=job.pk)
            for message in sorted(set(refused.values()))[:5]:
                row.add_log(f"not confirmed: {message}")
            row.save(update_fields=["log"])
        advance(job, done=len(ok_ids), failed=len(refused), skipped=skipped, cursor=cursor)


def _by_place(letters: list[DeadLetter]) -> dict:
    grouped: dict = defaultdict(list)
    for letter in letters:
        grouped[letter.place].append(letter)
    return grouped
