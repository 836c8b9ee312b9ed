"""Parquet (pyarrow): the table's columns (console.exports.base.COLUMNS), a row group per
thousand letters (or 16 MiB of bodies) written to the stream as it is made; headers, properties and details as JSON
text, the body as text or base64 as ``body_encoding`` says."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any

from console.exports.base import COLUMNS, ExportFormat, Record

#: Letters per row group (what is held at once), and at most about this much of their bodies.
ROW_GROUP = 1000
ROW_GROUP_BYTES = 16 * 1024 * 1024

_INTEGERS = {"id", "death_count", "replay_count"}


class _Sink:
    """What pyarrow writes into: the bytes written since they were last taken."""

    def __init__(self) -> None:
        self.pieces: list[bytes] = []
        self.closed = False
        self.position = 0

    def write(self, data: Any) -> int:
        piece = bytes(data)
        self.pieces.append(piece)
        self.position += len(piece)
        return len(piece)

    def tell(self) -> int:
        return self.position

    def flush(self) -> None:
        pass

    def close(self) -> None:
        self.closed = True

    def taken(self) -> bytes:
        data, self.pieces = b"".join(self.pieces), []
        return data


class Parquet(ExportFormat):
    label = "Parquet"
    extension = "parquet"
    content_type = "application/vnd.apache.parquet"

    def write(self, records: Iterable[Record], meta: Record) -> Iterator[bytes]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        schema = pa.schema([(column, pa.int64() if column in _INTEGERS else
                             pa.bool_() if column == "masked" else pa.string()) for column in COLUMNS],
                           metadata={"dlo_export": json.dumps(meta)})
        sink = _Sink()
        writer = pq.ParquetWriter(pa.PythonFile(sink, mode="w"), schema, compression="zstd")
        rows: list[Record] = []
        held = 0

        def group() -> bytes:
            columns = {column: [_value(column, row.get(column)) for row in rows] for column in COLUMNS}
            writer.write_table(pa.Table.from_pydict(columns, schema=schema))
            return sink.taken()

        for record in records:
            rows.append(record)
            held += len(record.get("body") or "") + len(record.get("body_read") or "")
            if len(rows) >= ROW_GROUP or held >= ROW_GROUP_BYTES:
                yield group()
                rows, held = [], 0
        if rows:
            yield group()
        writer.close()
        yield sink.taken()


def _value(column: str, value: Any) -> Any:
    if column in _INTEGERS or column == "masked" or value is None:
        return value
    if isinstance(value, (dict, list)):
        value = json.dumps(value, ensure_ascii=False, sort_keys=True)
    # Arrow's strings are UTF-8: a lone surrogate is written as its escape.
    return str(value).encode("utf-8", "backslashreplace").decode("utf-8")
