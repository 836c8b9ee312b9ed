"""Reading an export back as its users would: JSON Lines with ``json``, CSV with ``csv``,
Parquet with pyarrow."""

from __future__ import annotations

import base64
import csv
import gzip
import io
import json

import pyarrow.parquet as pq

FORMATS = ("jsonl", "csv", "parquet")


def downloaded(response) -> bytes:
    """The whole file a streamed answer sent (gunzipped when it was gzip-encoded)."""
    assert response.status_code == 200, response.content if hasattr(response, "content") else response
    data = b"".join(response.streaming_content)
    return gzip.decompress(data) if response.get("Content-Encoding") == "gzip" else data


def records(format_name: str, data: bytes) -> list[dict]:
    """The letters of a file, one dict each (JSON Lines' first line, its meta, left out)."""
    if format_name == "jsonl":
        lines = [json.loads(line) for line in data.decode("ascii").splitlines()]
        assert "export" in lines[0]
        return lines[1:]
    if format_name == "csv":
        csv.field_size_limit(64 * 1024 * 1024)  # a 16 MiB body is one cell, whole
        return list(csv.DictReader(io.StringIO(data.decode("utf-8"), newline="")))
    return pq.read_table(io.BytesIO(data)).to_pylist()


def as_text(format_name: str, data: bytes) -> str:
    """Every value of a file as text (a compressed Parquet file read first), to look for leaks."""
    if format_name == "parquet":
        return json.dumps(pq.read_table(io.BytesIO(data)).to_pylist(), ensure_ascii=False)
    return data.decode("utf-8")


def body_of(record: dict) -> bytes:
    """The stored bytes a record carries (exact, as text or base64)."""
    if record["body_encoding"] == "base64":
        return base64.b64decode(record["body"])
    return record["body"].encode("utf-8")
