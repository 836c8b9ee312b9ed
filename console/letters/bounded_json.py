"""JSON decoded from message content, bounded in nesting depth and size.

Message content is hostile (design invariant 7): a body of 5,000 nested arrays (``[[[[...]]]]``,
10 KB) made ``json.loads`` raise RecursionError on the letter's page, a 500 that left the letter
unviewable. Every decoder fed by content (the page's pretty JSON, redaction, a rule's body
path) decodes through :func:`loads`, which refuses such a document with :class:`TooDeep` (a
ValueError, like any JSON that does not parse), so the caller shows the bytes as text instead.

Here, in the bottom layer (plain Python, no Django), because every layer above reads content.
"""

from __future__ import annotations

import json
import re
from typing import Any

#: Deeper than this is not a document a person reads as a tree (and stays far below Python's
#: recursion limit, for json and for whoever walks the result).
MAX_DEPTH = 64
#: Larger than this is decoded by no one: it is shown (or masked) as text.
MAX_BYTES = 8 * 1024 * 1024

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)  # unrolled: linear and fast
_BRACKET = re.compile(r"[\[\]{}]")


class TooDeep(ValueError):
    """A JSON document nested deeper or larger than a decoder of content takes."""


def deeper_than(text: str, limit: int) -> bool:
    """Whether ``text`` opens more than ``limit`` brackets (``[`` and ``{``) at once, outside
    strings. Linear in the length; stops at the first level past the limit."""
    level = 0
    for bracket in _BRACKET.finditer(_STRING.sub('""', text)):
        if bracket.group() in "[{":
            level += 1
            if level > limit:
                return True
        else:
            level -= 1
    return False


def loads(data: str | bytes, *, max_depth: int = MAX_DEPTH, max_bytes: int = MAX_BYTES) -> Any:
    """``json.loads(data)``, or TooDeep (a ValueError) for a document nested deeper than
    ``max_depth`` or longer than ``max_bytes``; ValueError (or UnicodeDecodeError) as json's."""
    if len(data) > max_bytes:
        raise TooDeep(f"a JSON document of more than {max_bytes} bytes is not decoded")
    if isinstance(data, (bytes, bytearray, memoryview)):
        data = bytes(data)
        text = data.decode(json.detect_encoding(data), "surrogatepass")  # as json.loads reads bytes
    else:
        text = data
    if deeper_than(text, max_depth):
        raise TooDeep(f"a JSON document nested more than {max_depth} deep is not decoded")
    try:
        return json.loads(text)
    except RecursionError:  # a limit set above Python's recursion limit: still not a crash
        raise TooDeep("a JSON document nested too deep to decode") from None
