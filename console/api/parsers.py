"""The API's JSON parser: it refuses, at the door, values that no field could store.

JSON can spell things that Python parses but PostgreSQL and UTF-8 cannot hold: a string with
an unpaired surrogate (``"\\ud92b"``), an integer beyond 64 bits, a number too large for a
float. Each of them used to get through a serializer (a CharField or a DictField does not look)
and fail deep in a service or the database, a 500. Checking here, once, covers every API input,
including endpoints written later, instead of one field at a time.
"""

from __future__ import annotations

import math
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

INT64 = range(-(2**63), 2**63)


def unstorable(value: Any) -> str:
    """Why ``value`` (parsed JSON) cannot be stored, or "" if it can."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return "a string holds an unpaired surrogate, which cannot be encoded as UTF-8"
        elif isinstance(item, bool):
            continue
        elif isinstance(item, int) and item not in INT64:
            return "an integer is out of range (more than 64 bits)"
        elif isinstance(item, float) and not math.isfinite(item):
            return "a number is too large"
    return ""


class StorableJSONParser(JSONParser):
    """DRF's JSONParser, answering 400 for a document holding a value nothing can store."""

    def parse(self, stream, media_type=None, parser_context=None):
        data = super().parse(stream, media_type, parser_context)
        problem = unstorable(data)
        if problem:
            raise ParseError(f"JSON parse error - {problem}")
        return data
