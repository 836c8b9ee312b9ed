"""Read the periodic place samples (console.jobs.automation.periodic.sample_places) for the
inventory's sparklines; the place charts read them in console.services.trends."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from console.models import PlaceSample


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
