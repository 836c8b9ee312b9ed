"""Making, pausing, resuming and cancelling jobs. Running them is console.jobs."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.db.models import QuerySet

from console.access.scope import OutOfScope, guard_job, guard_letters, guard_place
from console.brokers import BrokerError, PlaceInfo, PlaceRef, adapter_class
from console.jobs.control import is_stale
from console.models import DeadPlace, Job
from console.services import approvals, audit
from console.services.audit import Actor, actor_name, actor_user
from console.services.selection import SelectionError, arrived_since, clean_filter, freeze, resolve

#: How many origins a preview lists; the rest are summed up as "other origins".
PREVIEW_ORIGINS = 50


class JobError(ValueError):
    """A job request the console refuses, with a message for the operator."""


def enqueue(job: Job) -> None:
    """Hand the job to the worker once the current transaction commits."""
    from console.jobs.tasks import run_job

    transaction.on_commit(lambda: run_job.delay(job.pk))


def _require_reason(reason: str) -> str:
    reason = (reason or "").strip()
    if not reason:
        raise JobError("a reason is required")
    return reason


@transaction.atomic
def do_capture(place: DeadPlace, *, actor: Actor, reason: str, limit: int | None = None) -> Job:
    """Take the messages in a dead place into custody (they leave the broker once stored)."""
    reason = _require_reason(reason)
    if limit is not None and limit < 1:
        raise JobError("limit must be at least 1")
    try:
        guard_place(actor, place)
    except OutOfScope as exc:
        raise JobError(str(exc)) from None
    busy = _unfinished_on(place, Job.Kind.CAPTURE)
    if busy is not None:
        raise JobError(f"job {busy.pk} is already capturing {place}; wait for it or cancel it")
    job = Job.objects.create(
        kind=Job.Kind.CAPTURE, actor=actor_user(actor), actor_name=actor_name(actor), reason=reason,
        place=place, selection={"limit": limit} if limit else {}, expected=place.depth or 0,
        total=limit or place.depth or 0,
    )
    audit.record("job.requested", actor=actor, reason=reason, job=job, place=place, count=job.total,
                 details={"kind": job.kind, "limit": limit})
    _enqueue_or_hold(job, actor=actor)
    return job


def do_shovel(place: DeadPlace, *, target: str, actor: Actor, reason: str, ticket: str = "") -> Job:
    """Have the broker itself move everything in a dead place to the queue ``target`` (in the
    place's scope), where its adapter can (RabbitMQ's shovel): no selection, no custody.

    The messages go from broker to broker-side queue; letters the console already holds stay as
    they are. The job (console.jobs.shovel) counts the place and the target before and after and
    fails unless the counts prove the move. Refused when the adapter cannot, when the target is
    empty, the place itself, or not a queue on the broker: RabbitMQ's shovel declares a missing
    destination, so a mistyped name would quietly become a new queue holding the letters.
    """
    reason = _require_reason(reason)
    target = (target or "").strip()
    if not target:
        raise JobError("a move of the whole queue needs a target queue")
    if target == place.name:
        raise JobError(f"the target is {place.name} itself: choose another queue")
    try:
        guard_place(actor, place)
    except OutOfScope as exc:
        raise JobError(str(exc)) from None
    adapter = adapter_class(place.broker.kind)
    if not adapter.can_move_server_side:
        raise JobError(f"{adapter.label or adapter.kind} cannot move a whole queue on the broker; "
                       "capture the letters and move them instead")
    source = _source_with_target_checked(place, target)  # on the broker, before any transaction
    if not source.depth:
        raise JobError(f"{place} is empty on the broker: there is nothing to move")
    with transaction.atomic():
        busy = _unfinished_on(place, Job.Kind.CAPTURE, Job.Kind.SHOVEL)
        if busy is not None:
            raise JobError(f"job {busy.pk} ({busy.kind}) is already taking messages from {place}; "
                           "wait for it or cancel it")
        job = Job.objects.create(
            kind=Job.Kind.SHOVEL, actor=actor_user(actor), actor_name=actor_name(actor), reason=reason,
            ticket=ticket, place=place, target=target, expected=source.depth, total=source.depth,
        )
        audit.record("job.requested", actor=actor, reason=reason, ticket=ticket, job=job, place=place,
                     target=target, count=job.total, details={"kind": job.kind, "depth": source.depth})
        _enqueue_or_hold(job, actor=actor)
    return job


def _unfinished_on(place: DeadPlace, *kinds: str) -> Job | None:
    """A job of one of these kinds that is still taking messages from the place, if any."""
    return Job.objects.filter(kind__in=kinds, place=place).exclude(status__in=Job.FINISHED).first()


def _source_with_target_checked(place: DeadPlace, target: str) -> PlaceInfo:
    """The place's counts on the broker, once the target queue is known to exist there;
    JobError saying what is wrong otherwise."""
    with place.broker.adapter() as adapter:
        try:
            source = adapter.stats(place.ref)
        except BrokerError as exc:
            raise JobError(f"cannot count {place} on the broker: {exc.message}") from None
        try:
            adapter.stats(PlaceRef(target, place.scope))
            return source
        except BrokerError as exc:
            if not exc.permanent:
                raise JobError(f"cannot check the target queue {target!r} on the broker: {exc.message}") from None
            raise JobError(f"the target queue {target!r} cannot be used ({exc.message}); the broker would "
                           "create a missing queue, so declare it first or check its name") from None


@transaction.atomic
def do_letters_job(
    kind: str,
    *,
    actor: Actor,
    reason: str,
    ids: list[int] | None = None,
    filter: dict[str, Any] | None = None,
    target: str = "",
    ticket: str = "",
    rate_limit: int | None = None,
    selection: dict[str, Any] | None = None,
    place: DeadPlace | None = None,
    concurrency: int = 1,
    canary_size: int | None = None,
    canary_wait_seconds: int | None = None,
    return_threshold: float | None = None,
) -> Job:
    """A replay, move, purge or mark-failed job on a frozen set of letters.

    The letters are ``ids``, a ``filter`` frozen now, or a ``selection`` frozen earlier by
    :func:`preview` (what the operator saw, never widened by letters that arrived since).
    ``place`` only labels the job when all its letters come from one dead place.
    A replay or move may be paced (:func:`checked_pace`): a rate limit, how many connections
    publish at once, and a canary and return threshold (console.jobs.returns).
    """
    if kind not in (Job.Kind.REPLAY, Job.Kind.MOVE, Job.Kind.PURGE, Job.Kind.MARK_FAILED):
        raise JobError(f"unknown action {kind!r}")
    reason = _require_reason(reason)
    target = (target or "").strip()
    if kind == Job.Kind.MOVE and not target:
        raise JobError("a move needs a target queue")
    if kind != Job.Kind.MOVE and target:
        raise JobError("only a move takes a target")
    pace = checked_pace(kind, rate_limit=rate_limit, concurrency=concurrency, canary_size=canary_size,
                        canary_wait_seconds=canary_wait_seconds, return_threshold=return_threshold)
    try:
        if selection is not None:
            if ids is not None or filter is not None:
                raise SelectionError("give a frozen selection, or ids or a filter, not both")
            selection = _checked_frozen(selection)
        else:
            selection = freeze(ids=ids, filter=filter)
        letters = resolve(selection)
        guard_job(actor, kind, letters)  # purge needs its permission; letters must be in the actor's scope
    except (SelectionError, OutOfScope) as exc:
        raise JobError(str(exc)) from None
    count = letters.count()
    if count == 0:
        raise JobError("no letters match this selection")
    if kind == Job.Kind.MOVE:
        brokers = set(letters.values_list("broker_id", flat=True).distinct()[:2])
        if len(brokers) > 1:
            raise JobError("a move takes letters from one broker at a time")
    job = Job.objects.create(
        kind=kind, actor=actor_user(actor), actor_name=actor_name(actor), reason=reason, ticket=ticket,
        target=target, selection=selection, expected=count, total=count, place=place, **pace,
    )
    audit.record(
        "job.requested", actor=actor, reason=reason, ticket=ticket, job=job, target=target,
        letter_ids=selection.get("ids", []), count=count,
        details={"kind": kind, "filter": selection.get("filter"), "max_id": selection.get("max_id"), **pace},
    )
    _enqueue_or_hold(job, actor=actor)
    return job


#: Bounds of a job's pace; beyond them a setting is refused, not silently clipped.
MAX_CONCURRENCY = 16
MAX_CANARY_WAIT_SECONDS = 3600


def checked_pace(kind: str, *, rate_limit: int | None = None, concurrency: int = 1, canary_size: int | None = None,
                 canary_wait_seconds: int | None = None, return_threshold: float | None = None) -> dict[str, Any]:
    """The pace settings of a job as Job fields, or JobError saying which one is wrong."""
    publishes = kind in (Job.Kind.REPLAY, Job.Kind.MOVE)
    watched = canary_size is not None or canary_wait_seconds is not None or return_threshold is not None
    if not publishes and (rate_limit is not None or concurrency != 1 or watched):
        raise JobError("only a replay or a move takes a rate limit, a concurrency, a canary or a return threshold")
    if rate_limit is not None and rate_limit < 1:
        raise JobError("rate_limit must be at least 1 letter per second")
    if not 1 <= concurrency <= MAX_CONCURRENCY:
        raise JobError(f"concurrency must be between 1 and {MAX_CONCURRENCY} connections")
    if canary_size is not None and canary_size < 1:
        raise JobError("canary_size must be at least 1 letter")
    if canary_wait_seconds is not None and not 0 <= canary_wait_seconds <= MAX_CANARY_WAIT_SECONDS:
        raise JobError(f"canary_wait_seconds must be between 0 and {MAX_CANARY_WAIT_SECONDS}")
    if canary_wait_seconds is not None and canary_size is None:
        raise JobError("canary_wait_seconds needs a canary_size")
    if return_threshold is not None and not 0 <= return_threshold <= 100:
        raise JobError("return_threshold is a percentage, between 0 and 100")
    pace: dict[str, Any] = {"rate_limit": rate_limit, "concurrency": concurrency, "canary_size": canary_size,
                            "return_threshold": return_threshold}
    if canary_wait_seconds is not None:
        pace["canary_wait_seconds"] = canary_wait_seconds
    return pace


def _enqueue_or_hold(job: Job, *, actor: Actor) -> None:
    """Queue the job, unless the two-person rule makes it wait for approval first."""
    if approvals.needs_approval(job.kind, job.total):
        approvals.hold_for_approval(job, actor=actor)
    else:
        enqueue(job)


def do_replay(*, actor: Actor, reason: str, ids=None, filter=None, ticket: str = "", rate_limit=None,
              **pace) -> Job:
    """Replay letters to the subscription each one died in (``pace``: see :func:`checked_pace`)."""
    return do_letters_job(Job.Kind.REPLAY, actor=actor, reason=reason, ids=ids, filter=filter,
                          ticket=ticket, rate_limit=rate_limit, **pace)


def do_move(*, target: str, actor: Actor, reason: str, ids=None, filter=None, ticket: str = "",
            rate_limit=None) -> Job:
    """Publish letters to a chosen queue instead of their origin."""
    return do_letters_job(Job.Kind.MOVE, actor=actor, reason=reason, ids=ids, filter=filter, target=target,
                          ticket=ticket, rate_limit=rate_limit)


def do_purge(*, actor: Actor, reason: str, ids=None, filter=None, ticket: str = "") -> Job:
    """Erase letters' bodies, keeping a tombstone with the envelope."""
    return do_letters_job(Job.Kind.PURGE, actor=actor, reason=reason, ids=ids, filter=filter, ticket=ticket)


def do_mark_failed(*, actor: Actor, reason: str, ids=None, filter=None, ticket: str = "") -> Job:
    """Give letters up for good [SAP's FAIL]: kept for the retention period, never replayed."""
    return do_letters_job(Job.Kind.MARK_FAILED, actor=actor, reason=reason, ids=ids, filter=filter,
                          ticket=ticket)


def preview(*, actor: Actor, ids: list[int] | None = None, filter: dict[str, Any] | None = None,
            sample: int = 5) -> dict:
    """What a job on this selection would touch: count, per-origin counts, a sample. Refused,
    like the job itself, when the selection holds letters outside the actor's scope."""
    try:
        selection = freeze(ids=ids, filter=filter)
        guard_letters(actor, resolve(selection))
    except (SelectionError, OutOfScope) as exc:
        raise JobError(str(exc)) from None
    return preview_frozen(selection, sample=sample)


def preview_frozen(selection: dict[str, Any], *, sample: int = 5) -> dict:
    """:func:`preview` of a selection frozen earlier: the same letters whenever it is asked.

    ``by_origin`` counts letters per broker and origin queue (most first, at most
    PREVIEW_ORIGINS of them; ``other_origins`` counts the letters of the rest);
    ``sample`` holds the ids of the first few letters; ``arrived_since`` counts matching
    letters newer than the frozen selection, which a job on it leaves alone.
    """
    try:
        selection = _checked_frozen(selection)
        letters = resolve(selection)
    except SelectionError as exc:
        raise JobError(str(exc)) from None
    by_origin, count = origin_counts(letters, limit=PREVIEW_ORIGINS)
    return {
        "selection": selection,
        "count": count,
        "by_origin": by_origin,
        "other_origins": count - sum(row["count"] for row in by_origin),
        "sample": list(letters.order_by("id").values_list("id", flat=True)[:sample]),
        "arrived_since": arrived_since(selection),
    }


def origin_counts(letters: QuerySet, *, limit: int) -> tuple[list[dict[str, Any]], int]:
    """The ``limit`` largest (broker, origin queue) pairs among ``letters`` with their counts
    (keys ``broker__name``, ``origin_queue``, ``count``; most first), and the count of all
    ``letters``, in one pass over them.

    The letters are counted per place and origin first, which PostgreSQL answers from the
    ``letter_groups`` index alone; the places are then joined to their brokers. Joining the
    brokers to the letters themselves read the whole table: 0.4 s for a place of 1,000,000
    letters, against about 0.1 s (benchmarks/scale.py).
    """
    from django.db import connection
    from django.db.models import Count

    from console.models import Broker

    per_place = letters.order_by().values("place_id", "origin_queue").annotate(letters=Count("id"))
    sql, params = per_place.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT broker.name, parts.origin_queue, sum(parts.letters)::bigint AS count,
                       (sum(sum(parts.letters)) OVER ())::bigint AS total
                FROM ({sql}) AS parts
                JOIN {DeadPlace._meta.db_table} AS place ON place.id = parts.place_id
                JOIN {Broker._meta.db_table} AS broker ON broker.id = place.broker_id
                GROUP BY broker.name, parts.origin_queue
                ORDER BY count DESC, broker.name, parts.origin_queue
                LIMIT %s""",
            [*params, limit],
        )
        rows = cursor.fetchall()
    by_origin = [{"broker__name": broker, "origin_queue": origin, "count": count} for broker, origin, count, _ in rows]
    return by_origin, rows[0][3] if rows else 0


def _checked_frozen(selection: dict[str, Any]) -> dict[str, Any]:
    """A frozen selection in its canonical form, or SelectionError if it is not one."""
    if not isinstance(selection, dict):
        raise SelectionError("a selection holds ids or a filter")
    if "ids" in selection:
        return freeze(ids=selection["ids"])
    if "filter" in selection and isinstance(selection["filter"], dict):
        try:
            max_id = int(selection["max_id"])
        except (KeyError, TypeError, ValueError):
            raise SelectionError("a frozen filter needs the highest id it saw (max_id)") from None
        return {"filter": clean_filter(selection["filter"]), "max_id": max_id}
    raise SelectionError("a selection holds ids or a filter")


@transaction.atomic
def do_cancel_job(job: Job, *, actor: Actor, reason: str = "") -> Job:
    """Ask the job to stop after its current batch; a queued or paused job stops at once."""
    job = Job.objects.select_for_update().get(pk=job.pk)
    if job.is_finished:
        raise JobError(f"job {job.pk} has already ended ({job.status})")
    job.cancel_requested = True
    if job.status in (Job.Status.QUEUED, Job.Status.PAUSED, Job.Status.AWAITING_APPROVAL):
        from django.utils import timezone

        job.status = Job.Status.CANCELLED
        job.finished_at = timezone.now()
        job.add_log(f"cancelled by {actor_name(actor)} before it ran further")
    job.save()
    audit.record("job.cancel", actor=actor, reason=reason, job=job, count=job.done)
    return job


@transaction.atomic
def do_pause_job(job: Job, *, actor: Actor, reason: str = "") -> Job:
    job = Job.objects.select_for_update().get(pk=job.pk)
    if job.is_finished or job.status in (Job.Status.PAUSED, Job.Status.AWAITING_APPROVAL):
        raise JobError(f"job {job.pk} is {job.status}: it cannot be paused")
    if job.kind == Job.Kind.SHOVEL:
        raise JobError(f"job {job.pk} cannot be paused: the broker moves the whole queue in one go; "
                       "cancel it to stop the shovel (what it moved stays moved)")
    job.pause_requested = True
    if job.status == Job.Status.QUEUED:
        job.status = Job.Status.PAUSED
    job.save()
    audit.record("job.pause", actor=actor, reason=reason, job=job)
    return job


@transaction.atomic
def do_resume_job(job: Job, *, actor: Actor, reason: str = "") -> Job:
    """Go on with a paused job (or one whose worker died) from its cursor.

    A job alive in a worker is refused: made ``queued`` again, a second worker would claim
    it and both would publish the same letters.
    """
    job = Job.objects.select_for_update().get(pk=job.pk)
    if job.is_finished:
        raise JobError(f"job {job.pk} has already ended ({job.status})")
    if job.status == Job.Status.AWAITING_APPROVAL:
        raise JobError(f"job {job.pk} waits for approval: it runs once another operator approves it")
    if job.status in (Job.Status.RUNNING, Job.Status.WAITING) and not is_stale(job):
        raise JobError(f"job {job.pk} is {job.status} in a worker: there is nothing to resume "
                       "(a job whose worker dies is resumed by itself)")
    job.pause_requested = False
    job.status = Job.Status.QUEUED
    if job.pause_reason:  # it paused itself (console.jobs.returns): a new canary, returns counted anew
        job.add_log(f"it had paused itself: {job.pause_reason}")
        job.watch = {"resumed": True}
        job.pause_reason = ""
    job.add_log(f"resumed by {actor_name(actor)}")
    job.save()
    audit.record("job.resume", actor=actor, reason=reason, job=job)
    enqueue(job)
    return job
