"""The place page's charts: depth and custody from the samples, arrivals from the letters,
in buckets fitting the place's age (console.services.trends), each with its axes' units and
a number to read."""

from __future__ import annotations

from django.utils.translation import ngettext

from console.access.scope import visible
from console.models import DeadLetter, DeadPlace
from console.services.trends import place_trend
from console.web.charts import Chart, Series, line_chart


def trend_charts(user, place: DeadPlace) -> list[Chart]:
    """Depth and arrivals of ``place`` over its age (30 days at most), as ``user`` may see them."""
    trend = place_trend(place.pk, visible(user, DeadLetter.objects.filter(place=place)))
    bucket, moment = trend.bucket, "%Y-%m-%d" if trend.bucket.daily else "%m-%d %H:%M"
    time_axis = f"time (UTC), per {bucket.name}"
    depth = [
        Series("Depth on the broker", [(p.at, p.depth) for p in trend.samples if p.depth is not None]),
        Series("Held in custody", [(p.at, p.held) for p in trend.samples]),
    ]
    latest = trend.samples[-1] if trend.samples else None
    depth_reading = ""
    if latest is not None:
        on_broker = "unknown" if latest.depth is None else f"{latest.depth:,}"
        depth_reading = f"Now: {on_broker} on the broker, {latest.held:,} held in custody"
    captured = trend.captured
    arrivals_reading = (
        f"{captured:,} {ngettext('letter', 'letters', captured)} captured since "
        f"{trend.since.strftime(moment)} UTC" if not trend.empty else ""
    )
    return [
        line_chart(f"Depth of {place.name}, per {bucket.name}", depth, daily=bucket.daily,
                   y_unit="messages", x_unit=time_axis, reading=depth_reading,
                   nothing="No samples of its depth yet (the scheduler takes them)."),
        line_chart(f"Arrivals in {place.name}, per {bucket.name}",
                   [Series("Letters captured", trend.arrivals)], daily=bucket.daily,
                   y_unit=f"letters per {bucket.name}", x_unit=time_axis, reading=arrivals_reading,
                   nothing="No letters captured in the last 30 days."),
    ]
