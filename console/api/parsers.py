"""The API's JSON parser: it refuses, at the door, values that no field could store.

JSON can spell things that Python parses but PostgreSQL and UTF-8 cannot hold: a string with
an unpaired surrogate (``"\\ud92b"``) or a NUL (``"\\u0000"``, in a value or a key), an integer
beyond 64 bits, a number too large for a float. Each of them used to get through a serializer
(a CharField or a DictField does not look) and fail deep in a service or the database, a 500.
Checking here, once, covers every API input, including endpoints written later, instead of one
field at a time. (A body with NUL bytes is still given to edit-and-replay, as base64.)
"""

from __future__ import annotations

import math
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

INT64 = range(-(2**63), 2**63)


def unstorable(value: Any, may_hold_nul: tuple[str, ...] = ()) -> str:
    """Why ``value`` (parsed JSON) cannot be stored, or "" if it can. The values of the top-level
    keys ``may_hold_nul`` may hold NUL characters (see StorableJSONParser)."""
    stack = [(value, False)]
    if isinstance(value, dict) and may_hold_nul:
        stack = [(key, False) for key in value] + [(item, key in may_hold_nul) for key, item in value.items()]
    while stack:
        item, nul_kept = stack.pop()
        if isinstance(item, dict):
            stack.extend((key, nul_kept) for key in item.keys())
            stack.extend((each, nul_kept) for each in item.values())
        elif isinstance(item, list):
            stack.extend((each, nul_kept) for each in item)
        elif isinstance(item, str):
            if "\x00" in item and not nul_kept:
                return "a string holds a NUL character (\\u0000), which PostgreSQL text and jsonb cannot hold"
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
    """DRF's JSONParser, answering 400 for a document holding a value nothing can store.

    A view whose service keeps NUL characters exactly (a message's own body and headers, which
    brokers allow and the console stores escaped) names those fields in ``json_may_hold_nul``;
    every other field of every view refuses them."""

    def parse(self, stream, media_type=None, parser_context=None):
        data = super().parse(stream, media_type, parser_context)
        view = (parser_context or {}).get("view")
        problem = unstorable(data, tuple(getattr(view, "json_may_hold_nul", ())))
        if problem:
            raise ParseError(f"JSON parse error - {problem}")
        return data
