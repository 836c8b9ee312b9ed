"""CSV: the letter lists' columns and the rest of the envelope (console.exports.base.COLUMNS),
the body as text (or base64, as ``body_encoding`` says), headers and properties as JSON. A cell
a spreadsheet would run as a formula is written as text (:func:`cell`, as OWASP advises)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Iterator
from typing import Any

from console.exports.base import COLUMNS, ExportFormat, Record
from console.exports.jsonl import PIECE_BYTES

#: What a spreadsheet reads as the start of a formula (OWASP's CSV injection list).
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def cell(value: Any) -> str:
    """A cell a spreadsheet shows as text: one starting like a formula gets a leading quote
    (the csv module then quotes the cell whole when it holds a separator or quote)."""
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    elif isinstance(value, bool):
        text = "true" if value else "false"
    else:
        text = str(value)
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")  # a lone surrogate as its escape
    return "'" + text if text.startswith(FORMULA_STARTS) else text


class CsvFile(ExportFormat):
    label = "CSV"
    extension = "csv"
    content_type = "text/csv; charset=utf-8"

    def write(self, records: Iterable[Record], meta: Record) -> Iterator[bytes]:
        out = io.StringIO()
        writer = csv.writer(out, quoting=csv.QUOTE_MINIMAL, lineterminator="\r\n")
        writer.writerow(COLUMNS)
        for record in records:
            writer.writerow([cell(record.get(column)) for column in COLUMNS])
            if out.tell() >= PIECE_BYTES:  # characters: at least as many bytes
                yield out.getvalue().encode("utf-8")
                out.seek(0)
                out.truncate()
        yield out.getvalue().encode("utf-8")
