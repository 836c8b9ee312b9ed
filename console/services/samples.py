"""Read the periodic place samples (console.jobs.automation.periodic.sample_places) for trends and charts."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.utils import timezone

from console.models import PlaceSample


@dataclass
class TrendPoint:
    """A bucket of samples: the last depth and held count seen in it, and the arrivals summed."""

    at: datetime
    depth: int | None
    held: int
    arrivals: int


def place_trend(place_id: int, *, hours: int = 24, buckets: int = 96) -> list[TrendPoint]:
    """The place's samples over the last ``hours``, folded into at most ``buckets`` buckets so
    a chart (and its table) stays readable however often the samples were taken. A day of
    one-minute samples is 1,440 small rows: folding them here is simpler than in SQL."""
    now = timezone.now()
    since = now - timedelta(hours=hours)
    stride = timedelta(hours=hours) / buckets
    points: dict[int, TrendPoint] = {}
    for sample in (
        PlaceSample.objects.filter(place_id=place_id, at__gte=since)
        .order_by("at")
        .values("at", "depth", "held", "arrivals")
    ):
        index = int((sample["at"] - since) / stride)
        point = points.get(index)
        if point is None:
            point = points[index] = TrendPoint(sample["at"], sample["depth"], sample["held"], 0)
        # The newest sample in the bucket gives its depth; arrivals add up.
        point.at, point.depth, point.held = sample["at"], sample["depth"], sample["held"]
        point.arrivals += sample["arrivals"]
    return [points[i] for i in sorted(points)]


def recent_arrivals(place_ids: list[int], *, minutes: int = 60) -> dict[int, list[int]]:
    """Per place, the arrivals of each sample over the last ``minutes``, oldest first (for a
    sparkline); an empty list when the place has no recent samples."""
    since = timezone.now() - timedelta(minutes=minutes)
    arrivals: dict[int, list[int]] = {pid: [] for pid in place_ids}
    for place_id, count in (
        PlaceSample.objects.filter(place_id__in=place_ids, at__gte=since)
        .order_by("place_id", "at")
        .values_list("place_id", "arrivals")
    ):
        arrivals[place_id].append(count)
    return arrivals
