"""JSON Lines: one letter a line, the whole record (body exact as base64, or masked text), the
export's meta on the first line (``{"export": {...}}``), which an import reads."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator

from console.exports.base import ExportFormat, Record

#: Records are joined into pieces of the stream of about this many bytes (a large body alone).
PIECE_BYTES = 256 * 1024


class JsonLines(ExportFormat):
    label = "JSON Lines"
    extension = "jsonl"
    content_type = "application/jsonl"
    carries_meta = True

    def write(self, records: Iterable[Record], meta: Record) -> Iterator[bytes]:
        yield _line({"export": meta})
        piece: list[bytes] = []
        size = 0
        for record in records:
            line = _line(record)
            piece.append(line)
            size += len(line)
            if size >= PIECE_BYTES:
                yield b"".join(piece)
                piece, size = [], 0
        if piece:
            yield b"".join(piece)


def _line(value: Record) -> bytes:
    # ensure_ascii: a lone surrogate or a control character leaves as an escape, never raw.
    return json.dumps(value, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n"
