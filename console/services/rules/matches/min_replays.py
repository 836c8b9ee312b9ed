"""``min_replays``: letters whose lineage the console replayed at least this many times."""

from __future__ import annotations

from console.services.rules.matches.base import CountBound


class MinReplays(CountBound):
    field, lookup = "replay_count", "gte"
    help = "Replayed by the console at least this many times (the letter's lineage)"
    example = 1
