"""Failure groups: letters that failed the same way, by their envelope's fingerprint.

Read-only queries shared by the pages and (later) the API. They take the same filter dict as
console.services.selection, so a group can be narrowed to one place, broker or state.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.db import connection
from django.db.models import Count, Max, Min, QuerySet
from django.db.models.functions import TruncDay
from django.utils import timezone

from console.models import DeadLetter
from console.services.selection import filter_letters

#: Origins listed per group; a group fed by more says "and N more".
ORIGINS_SHOWN = 5


@dataclass
class FailureGroup:
    """One fingerprint's letters: how many, when, from where, and one sample failure."""

    fingerprint: str
    count: int
    first_seen: datetime
    last_seen: datetime
    origins: list[str]
    more_origins: int
    places: list[int]
    exception_type: str
    exception_message: str
    sample_id: int


def failure_groups(params: dict[str, Any], *, letters: QuerySet | None = None, limit: int = 100) -> list[FailureGroup]:
    """The largest failure groups among the letters matching ``params`` (biggest first), of
    ``letters`` if given (what a user may see: their counts, origins, places and samples then
    come from those letters alone).

    Letters without a fingerprint form the group ``""``. The sample is the group's oldest
    letter (lowest id), read in one more query for all groups at once.

    One query in two steps: the letters are first counted per fingerprint, origin and place (a
    hash aggregate PostgreSQL can share among workers, reading only the ``letter_groups``
    index), then those few rows are folded per fingerprint. Distinct aggregates straight over
    the letters sorted each group's letters instead: 0.4 s against 0.15 s for a place of
    1,000,000 (benchmarks/scale.py).
    """
    parts = (
        filter_letters(params, letters)
        .order_by()
        .values("fingerprint", "origin_queue", "place_id")
        .annotate(letters=Count("id"), first_seen=Min("captured_at"), last_seen=Max("captured_at"),
                  sample_id=Min("id"))
    )
    sql, sql_params = parts.query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(
            f"""SELECT fingerprint, sum(letters)::bigint AS count, min(first_seen), max(last_seen),
                       array_agg(DISTINCT origin_queue), array_agg(DISTINCT place_id), min(sample_id)
                FROM ({sql}) AS parts
                GROUP BY fingerprint
                ORDER BY count DESC, fingerprint
                LIMIT %s""",
            [*sql_params, limit],
        )
        columns = ("fingerprint", "count", "first_seen", "last_seen", "origins", "places", "sample_id")
        rows = [dict(zip(columns, row)) for row in cursor.fetchall()]
    samples = {
        s["id"]: s
        for s in DeadLetter.objects.filter(id__in=[r["sample_id"] for r in rows]).values(
            "id", "exception_type", "exception_message"
        )
    }
    groups = []
    for row in rows:
        origins = sorted(o for o in row["origins"] if o)
        sample = samples.get(row["sample_id"], {})
        groups.append(
            FailureGroup(
                fingerprint=row["fingerprint"],
                count=row["count"],
                first_seen=row["first_seen"],
                last_seen=row["last_seen"],
                origins=origins[:ORIGINS_SHOWN],
                more_origins=max(len(origins) - ORIGINS_SHOWN, 0),
                places=sorted(row["places"]),
                exception_type=sample.get("exception_type", ""),
                exception_message=sample.get("exception_message", ""),
                sample_id=row["sample_id"],
            )
        )
    return groups


def daily_counts(
    params: dict[str, Any], fingerprints: list[str], *, letters: QuerySet | None = None, days: int = 30
) -> dict[str, list[tuple[datetime, int]]]:
    """Letters (of ``letters`` if given) captured per day for each of ``fingerprints`` over the last ``days`` days:
    every day from the first to the last with letters is there, 0 when a group had none (so a
    line does not skip a quiet day)."""
    since = timezone.now() - timedelta(days=days)
    rows = (
        filter_letters(params, letters)
        .filter(fingerprint__in=fingerprints, captured_at__gte=since)
        .order_by()
        .annotate(day=TruncDay("captured_at"))
        .values("fingerprint", "day")
        .annotate(count=Count("id"))
        # No ORDER BY: sorting the letters by day spilled to disk at 1,000,000 letters, and
        # the rows land in a dict anyway (hash aggregate: 0.24 s -> 0.14 s, scale.py).
    )
    found: dict[tuple[str, datetime], int] = {(r["fingerprint"], r["day"]): r["count"] for r in rows}
    if not found:
        return {fp: [] for fp in fingerprints}
    first, last = min(day for _, day in found), max(day for _, day in found)
    span = [first + timedelta(days=n) for n in range((last - first).days + 1)]
    return {fp: [(day, found.get((fp, day), 0)) for day in span] for fp in fingerprints}
