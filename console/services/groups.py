"""Failure groups: letters that failed the same way, by their envelope's fingerprint.

Read-only queries shared by the pages and (later) the API. They take the same filter dict as
console.services.selection, so a group can be narrowed to one place, broker or state.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from typing import Any, TypeVar

from django.db import connection
from django.db.models import Count, Max, Min, QuerySet, Sum
from django.db.models.functions import TruncDay
from django.utils import timezone

from console.access.actors import Actor
from console.access.redaction_policy import for_everyone, for_user
from console.access.scope import visible
from console.models import DeadLetter, GroupCount
from console.services import group_counts, group_keys
from console.services.selection import filter_letters

#: What groups are counted from: the letters, or their counts.
_Counted = TypeVar("_Counted", DeadLetter, GroupCount)

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
    #: What splits it from the other groups of its exception, where a mapping's group path
    #: does (``$.provider = "stripe"``, masked for the reader: console.services.group_keys).
    key: str = ""


@dataclass(frozen=True)
class Among:
    """The letters groups are counted over: those ``reader`` may see (everyone's without a
    reader), narrowed to the failure groups ``fingerprints`` (or to all others, ``excluded``)."""

    reader: Actor | None = None
    fingerprints: frozenset[str] | None = None
    excluded: bool = False

    def narrowed(self, queryset: QuerySet[_Counted]) -> QuerySet[_Counted]:
        """Letters, or their counts (console.models.GroupCount), narrowed alike."""
        queryset = visible(self.reader, queryset)
        if self.fingerprints is None:
            return queryset
        if self.excluded:
            return queryset.exclude(fingerprint__in=self.fingerprints)
        return queryset.filter(fingerprint__in=self.fingerprints)


EVERY_LETTER = Among()


def failure_groups(params: dict[str, Any], among: Among = EVERY_LETTER, *, limit: int = 100) -> list[FailureGroup]:
    """The largest failure groups among the letters matching ``params`` (biggest first), of
    ``among`` (what a user may see: their counts, origins, places and samples then come from
    those letters alone). Letters without a fingerprint form the group ``""``. The sample is
    the group's first letter.

    A filter by place, broker, state or fingerprint is answered from the counts the database
    keeps (console.services.group_counts: a few hundred rows for a million letters; see
    benchmarks/README.md, scale.py); any other reads the letters.
    """
    if group_counts.counted(params):
        rows = group_counts.groups(params, among.narrowed(GroupCount.objects.all()), limit)
    else:
        rows = _counted_from_letters(params, among.narrowed(DeadLetter.objects.all()), limit)
    samples = {
        s["id"]: s
        for s in DeadLetter.objects.filter(id__in=[r["sample_id"] for r in rows]).values(
            "id", "exception_type", "exception_message"
        )
    }
    keys = group_keys.shown_keys([row["sample_id"] for row in rows],
                                 for_everyone() if among.reader is None else for_user(among.reader))
    groups = []
    for row in rows:
        origins = sorted(o for o in row["origins"] if o)
        sample: Mapping[str, Any] = samples.get(row["sample_id"], {})
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
                key=keys.get(row["sample_id"], ""),
            )
        )
    return groups


def _counted_from_letters(params: dict[str, Any], letters: QuerySet[DeadLetter], limit: int) -> list[dict[str, Any]]:
    """The groups of any filter, counted over the letters (the sample: a group's lowest id).

    One query in two steps: the letters are first counted per fingerprint, origin and place (a
    hash aggregate PostgreSQL can share among workers, reading only the ``letter_groups``
    index), then those few rows are folded per fingerprint. Distinct aggregates straight over
    the letters sorted each group's letters instead, which was slower (see
    benchmarks/README.md, scale.py).
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
        return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def daily_counts(
    params: dict[str, Any], fingerprints: list[str], among: Among = EVERY_LETTER, *, days: int = 30
) -> dict[str, list[tuple[datetime, int]]]:
    """Letters (of ``among``) captured per UTC day for each of ``fingerprints`` over the last
    ``days`` days, today included: every day from the first to the last with letters is there,
    0 when a group had none (so a line does not skip a quiet day)."""
    today = timezone.now().astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    since = today - timedelta(days=days - 1)
    if group_counts.counted(params):
        rows = (
            filter_letters(params, among.narrowed(GroupCount.objects.all()))
            .filter(fingerprint__in=fingerprints, day__gte=since.date())
            .values("fingerprint", "day")
            .annotate(count=Sum("letters"))
            .order_by()
        )
        found = {(r["fingerprint"], datetime.combine(r["day"], time.min, tzinfo=UTC)): r["count"]
                 for r in rows if r["count"]}
    else:
        rows = (
            filter_letters(params, among.narrowed(DeadLetter.objects.all()))
            .filter(fingerprint__in=fingerprints, captured_at__gte=since)
            .order_by()
            .annotate(day=TruncDay("captured_at", tzinfo=UTC))
            .values("fingerprint", "day")
            .annotate(count=Count("id"))
            # No ORDER BY: sorting the letters by day spilled to disk at 1,000,000 letters, and
            # the rows land in a dict anyway (a hash aggregate; benchmarks/README.md, scale.py).
        )
        found = {(r["fingerprint"], r["day"]): r["count"] for r in rows}
    if not found:
        return {fp: [] for fp in fingerprints}
    first, last = min(day for _, day in found), max(day for _, day in found)
    span = [first + timedelta(days=n) for n in range((last - first).days + 1)]
    return {fp: [(day, found.get((fp, day), 0)) for day in span] for fp in fingerprints}
