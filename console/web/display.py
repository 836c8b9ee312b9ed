"""Turning a letter's stored bytes and tagged JSON into text for the pages.

Everything here returns plain strings; the templates escape them (message content is hostile
and is never marked safe). Large bodies are cut to a page-sized preview; the full bytes are
only ever served as a download.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from console.brokers.registry import KINDS, adapter_class
from console.letters import bounded_json
from console.letters.tables import LetterTable
from console.letters.values import display, utf8_prefix

#: How much of a body a page shows; the rest is behind "download body".
BODY_PAGE_LIMIT = 256 * 1024
#: Hex takes about three characters per byte, so a hex view shows fewer bytes.
HEX_PAGE_LIMIT = 64 * 1024


@dataclass
class BodyView:
    """A body ready for the page: ``kind`` is json, text or hex."""

    kind: str
    text: str
    shown_bytes: int
    total_bytes: int

    @property
    def truncated(self) -> bool:
        return self.shown_bytes < self.total_bytes


def body_view(body: bytes) -> BodyView:
    """Pretty JSON when the body parses (within bounded_json's depth), else UTF-8 text, else a
    hex dump; capped for the page. A hostile body (5,000 nested arrays) is shown as its text."""
    total = len(body)
    head = body[:BODY_PAGE_LIMIT]
    if total <= BODY_PAGE_LIMIT:
        try:
            parsed = bounded_json.loads(body)
        except (ValueError, RecursionError):  # UnicodeDecodeError and TooDeep are ValueErrors
            pass
        else:
            if isinstance(parsed, (dict, list)):
                return BodyView("json", json.dumps(parsed, indent=2, ensure_ascii=False), total, total)
    text = utf8_prefix(head)
    if text is not None:
        return BodyView("text", text, len(text.encode("utf-8")), total)
    shown = body[:HEX_PAGE_LIMIT]
    return BodyView("hex", hex_dump(shown), len(shown), total)


def hex_dump(data: bytes, width: int = 16) -> str:
    """Offset, hex bytes and printable ASCII, one line per ``width`` bytes."""
    lines = []
    for offset in range(0, len(data), width):
        chunk = data[offset : offset + width]
        ascii_part = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        lines.append(f"{offset:08x}  {chunk.hex(' '):<{width * 3}} {ascii_part}")
    return "\n".join(lines)


def value_rows(values: dict[str, Any]) -> list[tuple[str, str]]:
    """(name, shown value) for a table of headers or properties, keeping their order."""
    return [(str(name), display(value)) for name, value in (values or {}).items()]


def letter_tables(envelope_details: dict[str, Any], headers: dict[str, Any]) -> list[LetterTable]:
    """The tables every broker adapter reads from a letter (its ``letter_tables``), by kind: a
    letter carries what each broker it passed through wrote on it, wherever it is now."""
    tables: list[LetterTable] = []
    for kind in sorted(KINDS):
        try:
            adapter = adapter_class(kind)
        except ImportError:  # the adapter's client library is missing here
            continue
        tables += adapter.letter_tables(envelope_details, headers)
    return tables
