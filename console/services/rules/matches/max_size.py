"""``max_size``: letters whose body is at most this many bytes."""

from __future__ import annotations

from console.services.rules.matches.base import CountBound


class MaxSize(CountBound):
    field, lookup = "body_size", "lte"
    help = "A body of at most this many bytes"
    example = 65536
