"""Broker header values <-> JSON, keeping the types JSON lacks.

Strings, numbers, booleans, null, lists and tables map to themselves. Bytes, timestamps and
decimals become one-key objects tagged ``$bytes`` (base64), ``$ts`` (ISO 8601, UTC) and
``$decimal``, and floats that JSON cannot write (NaN, infinities) or that PostgreSQL would
give back as integers (written with an exponent) ``$float``. A table key that starts with
``$`` is escaped with one more ``$``, so a hostile header can never pass for a tag.

PostgreSQL's text and JSON cannot hold NUL, nor UTF-16 surrogates on their own: a string with
either is tagged ``$str`` (its UTF-8 bytes, surrogates kept, in base64) and comes back exact.
A table key cannot be tagged: its NUL is written as the visible escape ``\\x00``.

Also the one-line preview of a body (``body_preview``), which the pages show and
console.access.redactor makes from masked bodies, so it lives below both.
"""

from __future__ import annotations

import base64
import json
import math
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

_TAGS = {"$bytes", "$ts", "$decimal", "$str", "$float"}


def storable(text: str) -> bool:
    """Whether PostgreSQL can keep ``text`` as text: no NUL, no lone surrogate."""
    if "\x00" in text:
        return False
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def escape_nul(text: str) -> str:
    """``text`` with NUL written as ``\\x00`` and lone surrogates replaced, for a text column."""
    if storable(text):
        return text
    return text.replace("\x00", "\\x00").encode("utf-8", "replace").decode("utf-8")


def to_json(value: Any) -> Any:
    kind = type(value)  # the common exact types first: a capture runs this on every header
    if kind is str:
        return value if storable(value) else _tag_str(value)
    if kind is dict:
        return _table_to_json(value)
    if kind is list or kind is tuple:
        return [to_json(v) for v in value]
    if value is None or kind is int or kind is bool:
        return value
    if kind is float:  # PostgreSQL's JSON keeps a number's digits, not its exponent or NaN
        text = repr(value)
        return value if math.isfinite(value) and "e" not in text else {"$float": text}
    if isinstance(value, str):
        return to_json(str(value))
    if isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        return to_json(float(value))
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"$bytes": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=UTC)
        return {"$ts": value.astimezone(UTC).isoformat()}
    if isinstance(value, Decimal):
        return {"$decimal": str(value)}
    if isinstance(value, dict):
        return {_key(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_json(v) for v in value]
    return str(value)


def _table_to_json(table: dict[Any, Any]) -> dict[str, Any]:
    """``to_json`` of a dict, with the common case inline (a plain ASCII name, a plain ASCII
    string or a number): a capture turns every header of every message into JSON."""
    out: dict[str, Any] = {}
    for name, value in table.items():
        if type(name) is not str or not name.isascii() or "\x00" in name or name[:1] == "$":
            name = _key(name)
        kind = type(value)
        if kind is str:
            out[name] = value if value.isascii() and "\x00" not in value else to_json(value)
        elif kind is int or kind is bool or value is None:
            out[name] = value
        else:
            out[name] = to_json(value)
    return out


def _tag_str(text: str) -> dict[str, str]:
    return {"$str": base64.b64encode(text.encode("utf-8", "surrogatepass")).decode("ascii")}


def _key(name: Any) -> str:
    name = escape_nul(name if type(name) is str else str(name))
    return f"${name}" if name[:1] == "$" else name


def from_json(value: Any) -> Any:
    kind = type(value)  # JSON gives exact types; a replay runs this on every header
    if kind is list:
        return [from_json(v) for v in value]
    if kind is not dict:
        return value
    if len(value) == 1:
        (tag, inner), = value.items()
        if tag == "$bytes":
            return base64.b64decode(inner)
        if tag == "$ts":
            return datetime.fromisoformat(inner)
        if tag == "$decimal":
            return Decimal(inner)
        if tag == "$str":
            return base64.b64decode(inner).decode("utf-8", "surrogatepass")
        if tag == "$float":
            return float(inner)
    return {(k[1:] if k[:2] == "$$" else k): from_json(v) for k, v in value.items()}


def display(value: Any) -> str:
    """A short text for tables: bytes shown as text when they decode, else as hex."""
    if isinstance(value, dict) and len(value) == 1:
        (tag, inner), = value.items()
        if tag == "$bytes":
            raw = base64.b64decode(inner)
            try:
                return raw.decode("utf-8")
            except UnicodeDecodeError:
                return raw.hex(" ")
        if tag == "$str":
            return escape_nul(base64.b64decode(inner).decode("utf-8", "surrogatepass"))
        if tag in _TAGS:
            return str(inner)
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


#: Characters of the body shown in a list row.
PREVIEW_CHARS = 80


def utf8_prefix(data: bytes) -> str | None:
    """``data`` as text if it is UTF-8, allowing a character cut in two at the very end."""
    for cut in range(4):
        try:
            return data[: len(data) - cut].decode("utf-8")
        except UnicodeDecodeError:
            continue
    return None


def body_preview(head: bytes | memoryview | None, size: int) -> str:
    """A one-line taste of a body for a list row."""
    if not size:
        return ""
    data = bytes(head or b"")
    text = utf8_prefix(data)
    if text is None:
        return f"(binary, {size} bytes)"
    text = " ".join(text.split())
    return text[:PREVIEW_CHARS] + ("…" if len(text) > PREVIEW_CHARS or size > len(data) else "")
