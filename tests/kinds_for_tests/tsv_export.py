"""A test-only export format, which no file under console/ names: tab-separated id, origin and
reason, one letter a line (tests/exports/test_a_new_export_format_is_one_room.py)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from console.exports.base import ExportFormat, Record


class Tsv(ExportFormat):
    label = "TSV (ids)"
    extension = "tsv"
    content_type = "text/tab-separated-values"

    def write(self, records: Iterable[Record], meta: Record) -> Iterator[bytes]:
        for record in records:
            yield f"{record['id']}\t{record['origin_queue']}\t{record['reason']}\n".encode()
