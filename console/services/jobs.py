"""What the job kinds share below the jobs layer: the error a refused request raises, and the
preview of a selection (what a job on it would touch). Jobs are requested through
console.jobs.door.requests and steered through console.jobs.door.steering."""

from __future__ import annotations

from typing import Any

from django.db import connection
from django.db.models import Count, QuerySet

from console.access.actors import Actor
from console.access.guards import guard_letters
from console.access.scope import OutOfScope
from console.models import Broker, DeadLetter, DeadPlace
from console.refusals import Conflict, Refusal
from console.services.selection import SelectionError, arrived_since, clean_filter, freeze, resolve

#: How many origins a preview lists; the rest are summed up as "other origins".
PREVIEW_ORIGINS = 50


class JobError(Refusal):
    """A job request the console refuses, with a message for the operator."""


class JobStateError(JobError, Conflict):
    """The job is not in a state that allows this (it has ended, waits for approval, runs in a
    worker): 409."""


def preview(*, actor: Actor, ids: list[int] | None = None, filter: dict[str, Any] | None = None,
            sample: int = 5) -> dict[str, Any]:
    """What a job on this selection would touch: count, per-origin counts, a sample. Refused,
    like the job itself, when the selection holds letters outside the actor's scope."""
    try:
        selection = freeze(ids=ids, filter=filter)
        guard_letters(actor, resolve(selection))
    except (SelectionError, OutOfScope) as exc:
        raise JobError(str(exc)) from None
    return preview_frozen(selection, reader=actor, sample=sample)


def preview_frozen(selection: dict[str, Any], *, reader: Actor, sample: int = 5) -> dict[str, Any]:
    """:func:`preview` of a selection frozen earlier: the same letters whenever it is asked.

    ``by_origin`` counts letters per broker and origin queue (most first, at most
    PREVIEW_ORIGINS of them; ``other_origins`` counts the letters of the rest);
    ``sample`` holds the ids of the first few letters; ``arrived_since`` counts matching
    letters newer than the frozen selection, which a job on it leaves alone, among those the
    ``reader`` may see.
    """
    try:
        selection = checked_frozen(selection)
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
        "arrived_since": arrived_since(selection, reader=reader),
    }


def origin_counts(letters: QuerySet[DeadLetter], *, limit: int) -> tuple[list[dict[str, Any]], int]:
    """The ``limit`` largest (broker, origin queue) pairs among ``letters`` with their counts
    (keys ``broker__name``, ``origin_queue``, ``count``; most first), and the count of all
    ``letters``, in one pass over them.

    The letters are counted per place and origin first, which PostgreSQL answers from the
    ``letter_groups`` index alone; the places are then joined to their brokers. Joining the
    brokers to the letters themselves read the whole table (see benchmarks/README.md,
    scale.py).
    """
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


def checked_frozen(selection: dict[str, Any]) -> dict[str, Any]:
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
