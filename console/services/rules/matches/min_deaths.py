"""``min_deaths``: letters that died at least this many times."""

from __future__ import annotations

from console.services.rules.matches.base import CountBound


class MinDeaths(CountBound):
    field, lookup = "death_count", "gte"
    help = "Died at least this many times (as the broker counts)"
    example = 2
