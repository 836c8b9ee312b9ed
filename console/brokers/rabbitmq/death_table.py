"""RabbitMQ's ``x-death`` header as a table for the letter's page (console.letters.tables):
one row per entry, newest first, as RabbitMQ writes them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from console.letters.tables import Column, LetterTable
from console.letters.values import display

#: (field of an x-death entry, its heading): the fields RabbitMQ writes, in the order it documents.
FIELDS = (("queue", "Queue"), ("reason", "Reason"), ("count", "Count"), ("exchange", "Exchange"),
          ("routing-keys", "Routing keys"), ("time", "Time"), ("original-expiration", "Original expiration"))
COLUMNS = tuple(Column(label, numeric=name == "count") for name, label in FIELDS)


def x_death_tables(envelope_details: dict[str, Any], headers: dict[str, Any]) -> list[LetterTable]:
    """The x-death table of a letter, or none when it carries no x-death.

    The entries are read from the header; letters captured before 2026-11-23 also kept a copy
    in the envelope details, which wins. Either way the values are tagged JSON
    (console.letters.values).
    """
    entries = (envelope_details or {}).get("x_death") or (headers or {}).get("x-death") or []
    if not isinstance(entries, list):
        return []
    rows = tuple(tuple(_cell(name, entry) for name, _ in FIELDS) for entry in entries if isinstance(entry, dict))
    if not rows:
        return []
    return [LetterTable(anchor="x-death", title="x-death", note="newest first", columns=COLUMNS, rows=rows)]


def _cell(name: str, entry: dict[str, Any]) -> str:
    value = entry.get(name, entry.get(name.replace("-", "_"), ""))
    if isinstance(value, list):
        return ", ".join(display(v) for v in value)
    if name == "time" and isinstance(value, int) and not isinstance(value, bool):
        # An AMQP timestamp a client left undecoded: seconds since the epoch.
        return datetime.fromtimestamp(value, tz=UTC).isoformat()
    return "" if value in (None, "") else display(value)
