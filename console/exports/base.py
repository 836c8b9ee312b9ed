"""What an export format declares: its name, how a file of it is called and typed, and how it
writes a stream of letters' records (console.services.letter_export makes them) as bytes, a
little at a time, never holding the whole file."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, ClassVar

#: A letter's record: JSON-like values only (str, int, bool, None, lists and dicts of them).
Record = dict[str, Any]


class ExportFormat:
    """One file format. ``write`` yields the file's bytes in pieces as it reads ``records``;
    ``meta`` (what was asked for, by whom, when, how many) goes in the file where the format
    has room for it (JSON Lines' first line), else in the sidecar (``?meta=1``)."""

    label: ClassVar[str] = ""
    extension: ClassVar[str] = ""
    content_type: ClassVar[str] = "application/octet-stream"
    #: Whether the file itself holds the meta (so an import can read who exported it).
    carries_meta: ClassVar[bool] = False

    def write(self, records: Iterable[Record], meta: Record) -> Iterator[bytes]:
        raise NotImplementedError


#: The columns of a table (CSV, Parquet): the letter lists' own, then the rest of the envelope.
COLUMNS = ("id", "captured_at", "state", "broker", "place", "message_id", "origin_address", "origin_queue",
           "routing_key", "reason", "death_count", "first_failed_at", "last_failed_at", "exception_type",
           "exception_message", "exception_stack", "fingerprint", "trace_id", "span_id", "replay_count",
           "content_type", "body_format", "body_encoding", "body", "masked", "headers", "properties", "details")
