"""Replay from the archive: republish letters kept in the lake to the subscription each one
died in, with progress, pause, cancel and resume like any job.

The selection (day range, origin, exception type, failure group) is frozen with the lake's
letters watermark, so the job acts on what was archived when it was asked for. The request
counts the letters per dead place with Spark (console.pipeline.replay), so the scope guard and
the approval rule see exactly what the job will publish. The job goes partition by partition
(day, broker, place; letters by id inside) and publishes through the same senders, publications
form and confirms as every replay (console.jobs.engines.senders), one audit row per batch and dead
place. ``cursor`` counts the letters handled in that fixed order, so a resumed job goes on
where it stopped; a letter's replay id comes from this job and the letter
(console.services.custody.replay_id), so a batch published again after a crash carries the
same ids.

Letters still held (or replaying) in custody are skipped: replay those from custody. Letters
whose body retention erased are skipped too.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, replace
from datetime import date
from typing import Any

from django.conf import settings
from django.db import transaction

from console.access.actors import Actor
from console.brokers.publication import Publication
from console.jobs.control import Throttle, advance, checkpoint, note
from console.jobs.engines.senders import Senders
from console.jobs.kinds.base import ORIGIN, JobKind, Params, Plan, Target
from console.models import Broker, DeadLetter, DeadPlace, Job, LetterState
from console.services import audit
from console.services.custody import replay_id
from console.services.jobs import JobError
from console.wording import counted

CRITERIA = ("origin", "exception", "fingerprint")

#: An archived letter as Spark reads it from the lake (a pyspark Row: id, broker_id, place,
#: day, origin_queue, place_scope, body, headers, properties).
Row = Any


@dataclass(frozen=True)
class ArchiveParams(Params):
    lake: str | None = None
    since: str | None = None
    until: str | None = None
    origin: str = ""
    exception: str = ""
    fingerprint: str = ""
    rate_limit: int | None = None


def _day(value: str | None, name: str) -> str | None:
    if not value:
        return None
    try:
        return date.fromisoformat(value).isoformat()
    except ValueError:
        raise JobError(f"{name} must be a day, YYYY-MM-DD; got {value!r}") from None


class ArchiveReplay(JobKind[ArchiveParams]):
    name = "archive_replay"
    params = ArchiveParams
    publishes_to = ORIGIN  # each letter to the origin the lake kept for it
    resolves = ("confirmed", LetterState.REPLAYED)

    def parse(self, given: dict[str, Any]) -> ArchiveParams:
        from console.pipeline import lake as lakefs

        params = super().parse(given)
        return replace(params, lake=lakefs.lake_url(params.lake), since=_day(params.since, "since"),
                       until=_day(params.until, "until"))

    def validate(self, params: ArchiveParams) -> None:
        if params.rate_limit is not None and params.rate_limit < 1:
            raise JobError("rate_limit must be at least 1 letter per second")

    def check_outside(self, params: ArchiveParams, given: dict[str, Any]) -> dict[str, Any]:
        """The frozen selection and the letters it names per place, counted by Spark before the
        request's transaction opens (a Spark job takes seconds)."""
        from console.pipeline.archive import watermark
        from console.pipeline.replay import per_place_and_origins
        from console.pipeline.schema import LETTERS
        from console.pipeline.session import get_spark

        selection: dict[str, Any] = {"lake": params.lake, "since": params.since, "until": params.until}
        selection.update({key: getattr(params, key) for key in CRITERIA if getattr(params, key)})
        if params.since and params.until and params.since > params.until:
            raise JobError("since must not be after until")
        if not any(selection.get(key) for key in ("since", "until", *CRITERIA)):
            raise JobError("choose days, an origin, an exception or a group: not the whole archive at once")
        selection["max_id"] = watermark(params.lake or "", LETTERS)  # parse made it the lake's URL
        if not selection["max_id"]:
            raise JobError(f"nothing has been archived to {params.lake} yet")
        counts, selection["origins"] = per_place_and_origins(get_spark(), selection)
        if not counts:
            raise JobError("no archived letters match this selection")
        return {"selection": selection, "per_place": counts}

    def plan(self, params: ArchiveParams, given: dict[str, Any], *, actor: Actor, checked: dict[str, Any]) -> Plan:
        return Plan(per_place=checked["per_place"], selection=checked["selection"],
                    details={"selection": checked["selection"]})

    def origins(self, selection: dict[str, Any]) -> list[Target]:
        """The origins the archived letters name (counted with them when the job was asked for:
        the selection is frozen at the lake's watermark, so they are all it publishes into)."""
        return [Target(int(broker_id), name, scope) for broker_id, name, scope in selection.get("origins", [])]

    def run(self, job: Job) -> str:
        from console.pipeline.replay import batches, selected_letters
        from console.pipeline.session import get_spark

        letters = selected_letters(get_spark(), job.selection).cache()
        try:
            throttle = Throttle(ArchiveParams.of(job).rate_limit)
            with Senders(job) as senders:
                for batch, position in batches(letters, job.cursor, throttle.batch_size(settings.DLO_BATCH_SIZE)):
                    checkpoint(job)
                    _replay_batch(job, batch, senders, cursor=position)
                    throttle.wait(len(batch))
        finally:
            letters.unpersist()
        return f"{counted(job.done, 'archived letter')} replayed, {job.failed} not confirmed, {job.skipped} skipped"


def _replay_batch(job: Job, batch: list[Row], senders: Senders, *, cursor: int) -> None:
    in_custody = set(DeadLetter.objects.filter(id__in=[row.id for row in batch],
                                               state__in=(LetterState.HELD, LetterState.REPLAYING))
                     .values_list("id", flat=True))
    sendable = [row for row in batch if row.id not in in_custody and row.body is not None]
    skipped = len(batch) - len(sendable)
    refused: dict[int, str] = {}
    by_broker: dict[int, list[Publication]] = defaultdict(list)
    known = set(Broker.objects.filter(pk__in={row.broker_id for row in sendable}).values_list("pk", flat=True))
    for row in sendable:
        if not row.origin_queue:
            refused[row.id] = "origin unknown"
        elif row.broker_id not in known:
            refused[row.id] = "the broker is no longer configured"
        else:
            by_broker[row.broker_id].append(Publication(
                row.id, row.origin_queue, row.place_scope or "", bytes(row.body), row.headers or "{}",
                row.properties or "{}", replay_id(job.pk, row.id)))
    ok, not_ok = senders.wait(senders.send(by_broker))
    refused.update(not_ok)
    confirmed = set(ok)
    if skipped:
        note(job, f"{skipped} skipped: still held in custody (replay them there) or body erased")
    _record(job, [row for row in sendable if row.id in confirmed], [row for row in sendable if row.id in refused],
            refused, skipped=skipped, cursor=cursor)


def _record(job: Job, confirmed: list[Row], refused_rows: list[Row], errors: dict[int, str], *, skipped: int,
            cursor: int) -> None:
    """One audit row per dead place and outcome, with the job's counters, in one transaction."""
    with transaction.atomic():
        for outcome, rows in (("confirmed", confirmed), ("failed", refused_rows)):
            by_place: dict[tuple[int, int, str], list[Row]] = defaultdict(list)
            for row in rows:
                by_place[(row.broker_id, row.place, str(row.day))].append(row)
            for (broker_id, place_id, day), letters in by_place.items():
                place = DeadPlace.objects.select_related("broker").filter(pk=place_id).first()
                details: dict[str, Any] = {"lake": job.selection["lake"], "partition": f"{day}/{place_id}"}
                if outcome == "failed":
                    details["errors"] = sorted({errors[row.id] for row in letters})[:20]
                audit.record(job.kind, actor=job.actor_name, reason=job.reason, ticket=job.ticket, job=job,
                             broker=Broker.objects.filter(pk=broker_id).first() if place is None else None,
                             place=place, letter_ids=[row.id for row in letters], outcome=outcome,
                             target=", ".join(sorted({row.origin_queue for row in letters}))[:500]
                             if outcome == "confirmed" else "", details=details)
        advance(job, done=len(confirmed), failed=len(refused_rows), skipped=skipped, cursor=cursor)
