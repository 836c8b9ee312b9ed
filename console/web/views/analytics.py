"""Failure analytics (console.services.analytics): what became of the letters over the whole
history, with charts drawn on the server and every number a link to the letters behind it."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from console.services.analytics import analytics_for, letters_url
from console.web.charts import Bar, bar_chart, heat_map

#: Groups and origins drawn in the charts; the tables list more.
CHARTED = 10


def _hours(minutes: float | None) -> float | None:
    return None if minutes is None else round(minutes / 60, 1)


@login_required
def analytics(request):
    found = analytics_for(request.user)
    charts = []
    if found.overall is not None:
        charts = [
            heat_map("Arrivals by weekday and hour (UTC) over the whole history", found.arrivals,
                     lambda day, hour: letters_url(weekday=day, hour=hour)),
            bar_chart("Time to resolution of the largest groups (hours)", ["median", "90th percentile"],
                      [Bar(row.group_title,
                           [_hours(row.stat.median_minutes), _hours(row.stat.p90_minutes)],
                           row.url(state="replayed,failed"))
                       for row in found.groups[:CHARTED]], unit=" h"),
            bar_chart("Replay outcome by origin (letters)", ["stayed away", "came back"],
                      [Bar(row.label, [row.stat.stayed_away, row.stat.came_back], row.url(state="replayed"))
                       for row in found.origins[:CHARTED] if row.stat.replayed]),
        ]
    return render(request, "web/analytics.html", {"found": found, "charts": charts})
