"""Failure groups over the whole history, as the pipeline's ``groups`` job last computed them.

For a page "failure groups (history)": ``history_groups()`` gives the rows, each with its daily
counts over the last ``days`` days (zeros filled in) for a trend chart.
"""

from __future__ import annotations

from datetime import date, timedelta
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone

from console.models import FailureGroupDay, FailureGroupHistory


def history_groups(*, groups: QuerySet[FailureGroupHistory] | None = None, limit: int = 50, days: int = 30,
                   fingerprint: str | None = None, today: date | None = None) -> list[dict[str, Any]]:
    """The largest groups (or one, by fingerprint) of ``groups`` (default: all; a page passes
    what its user may see), each with ``trend``: [(day, count), ...]."""
    groups = FailureGroupHistory.objects.all() if groups is None else groups
    if fingerprint:
        groups = groups.filter(fingerprint=fingerprint)
    largest = list(groups.order_by("-count", "fingerprint")[:limit])
    today = today or timezone.now().date()
    first = today - timedelta(days=days - 1)
    counts: dict[int, dict[date, int]] = {group.pk: {} for group in largest}
    for group_id, day, count in FailureGroupDay.objects.filter(group__in=largest, day__gte=first, day__lte=today) \
            .values_list("group_id", "day", "count"):
        counts[group_id][day] = count
    span = [first + timedelta(days=offset) for offset in range(days)]
    return [
        {
            "fingerprint": group.fingerprint, "exception_type": group.exception_type, "reason": group.reason,
            "sample_message": group.sample_message, "count": group.count, "first_seen": group.first_seen,
            "last_seen": group.last_seen, "origins": group.origins, "brokers": group.brokers,
            "consumers": group.consumers, "hosts": group.hosts, "computed_at": group.computed_at,
            "trend": [(day, counts[group.pk].get(day, 0)) for day in span],
        }
        for group in largest
    ]
