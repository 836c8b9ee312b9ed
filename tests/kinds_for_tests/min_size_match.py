"""A kind of rule match only the tests register (tests/rules/test_a_new_match_kind_is_one_room.py):
letters whose body is at least this many bytes. No file under console/ names it."""

from __future__ import annotations

from console.services.rules.matches.base import CountBound


class MinSize(CountBound):
    field, lookup = "body_size", "gte"
    help = "A body of at least this many bytes"
    example = 1024
