"""Avro (``fastavro``), read with the schemas an admin uploaded (``.avsc``;
console.services.body_schemas keeps them), in the three framings a body carries its schema by:

- Confluent's wire format: a zero byte, then the schema registry's id of the schema (4 bytes,
  big-endian), then the datum; the admin gives each uploaded schema its registry id;
- the single-object encoding: ``C3 01``, then the schema's CRC-64-AVRO fingerprint (8 bytes,
  little-endian), then the datum; the fingerprint is the uploaded schema's own;
- an object container file (``Obj\\x01``), which carries its schema: read as its records.

Parsing is fastavro's: no code run. A schema whose arrays or maps may hold values that take no
bytes (null, an empty record) is not used to read: a body of a few bytes could declare billions
of them. An edited value is written back with the same schema and framing, checked against it.
"""

from __future__ import annotations

import io
import json
import logging
from dataclasses import dataclass, field
from datetime import date, datetime, time
from decimal import Decimal
from functools import cache
from typing import Any

# A recursive schema (a linked list, a tree) is read, written and checked by fastavro's
# pure-Python code, not its compiled code: that recurses in C without Python's recursion limit,
# and a body nested 10,000 deep (a few bytes a level) crashed the process with a segmentation
# fault; Python's raises RecursionError, and the body is Unreadable. Any other schema's depth
# is its own, and the compiled code reads it five times as fast.
import fastavro
from fastavro import _read_py as avro_read
from fastavro import _validation_py as avro_validation
from fastavro import _write_py as avro_write
from fastavro.schema import SchemaParseException, fingerprint, parse_schema, to_parsing_canonical_form
from fastavro.validation import ValidationError

from console.decoders import schemas
from console.decoders.base import MAX_ITEMS, BodyFormat, Said, Unreadable, Unwritable, bounded, unbounded
from console.refusals import Refusal

log = logging.getLogger(__name__)

CONFLUENT = b"\x00"
SINGLE_OBJECT = b"\xc3\x01"
CONTAINER = b"Obj\x01"


class SchemaError(Refusal):
    """An Avro schema that does not parse: why."""


@dataclass
class Known:
    """The uploaded schemas by registry id and by fingerprint (its 8 bytes as hex)."""

    by_id: dict[int, Any] = field(default_factory=dict)
    by_fingerprint: dict[str, Any] = field(default_factory=dict)
    by_name: dict[str, Any] = field(default_factory=dict)


def parsed_schema(data: bytes) -> tuple[Any, str]:
    """An uploaded ``.avsc`` parsed, and its fingerprint (SchemaError saying why it does not parse)."""
    try:
        schema = parse_schema(json.loads(data))
    except (ValueError, TypeError, KeyError, SchemaParseException, RecursionError) as exc:
        raise SchemaError(f"not an Avro schema (.avsc): {exc}") from None
    return schema, fingerprint(to_parsing_canonical_form(schema), "CRC-64-AVRO")


def declared(data: bytes) -> list[str]:
    """What a schema declares: its full name (or its type, for a schema that is not named)."""
    schema, _ = parsed_schema(data)
    return [str(schema.get("name", schema.get("type", ""))) if isinstance(schema, dict) else str(schema)]


def known() -> Known:
    return schemas.parsed("avro", _index)


def _index(uploads: list[schemas.Upload]) -> Known:
    found = Known()
    for upload in uploads:
        try:
            schema, print_ = parsed_schema(upload.data)
        except SchemaError as exc:  # checked when uploaded; a newer fastavro may read it otherwise
            log.warning("the Avro schema %r is left out: %s", upload.name, exc)
            continue
        found.by_fingerprint[print_] = schema
        if isinstance(schema, dict) and isinstance(schema.get("name"), str):
            found.by_name[schema["name"]] = schema
        if upload.registry_id is not None:
            found.by_id[upload.registry_id] = schema
    return found


class Avro(BodyFormat):
    label = "Avro"
    content_types = ("application/avro", "avro/binary", "application/vnd.apache.avro+binary",
                     "application/x-avro-binary", "application/vnd.confluent.avro")
    magic = (SINGLE_OBJECT, CONTAINER)
    writes = True

    def starts(self) -> tuple[bytes, ...]:
        return (*self.magic, *(CONFLUENT + number.to_bytes(4, "big") for number in known().by_id))

    def recognises(self, body: bytes) -> bool:
        if body.startswith(self.magic):
            return True
        return body.startswith(CONFLUENT) and len(body) >= 5 and int.from_bytes(body[1:5], "big") in known().by_id

    def declares(self, upload: bytes) -> list[str]:
        return declared(upload)

    def read(self, body: bytes, said: Said) -> Any:
        if body.startswith(CONTAINER):
            return _records(body)
        header, schema = _framed(body, said, Unreadable)
        try:
            value = _library(schema).schemaless_reader(io.BytesIO(body[len(header):]), schema)
        except (ValueError, TypeError, KeyError, IndexError, EOFError, StopIteration, RecursionError,
                MemoryError, OverflowError, UnicodeDecodeError) as exc:
            raise Unreadable(f"does not read with its schema: {type(exc).__name__}") from None
        return bounded(value)

    def write(self, value: Any, like: bytes, said: Said) -> bytes:
        datum = unbounded(value)
        if like.startswith(CONTAINER):
            return _container(datum, like)
        header, schema = _framed(like, said, Unwritable)
        datum = _check(datum, schema)
        out = io.BytesIO(header)
        out.seek(len(header))
        try:
            (avro_write if _recursive(schema) else fastavro).schemaless_writer(out, schema, datum)
        except (ValueError, TypeError, KeyError, RecursionError, OverflowError) as exc:
            raise Unwritable(f"the edit does not fit its Avro schema: {exc}") from None
        return out.getvalue()


def _framed(body: bytes, said: Said, refused: type[Exception]) -> tuple[bytes, Any]:
    """The framing's header and the uploaded schema it names (``refused`` when none is known);
    a body without framing has the schema an admin's mapping names (its message type)."""
    found = known()
    framed = ((body.startswith(SINGLE_OBJECT) and body[2:10].hex() in found.by_fingerprint)
              or (body.startswith(CONFLUENT) and len(body) >= 5 and int.from_bytes(body[1:5], "big") in found.by_id))
    if said.message_type and not framed:
        schema = found.by_name.get(said.message_type)
        if schema is None:
            raise refused(f"no uploaded Avro schema is named {said.message_type}")
        return b"", _bounded_schema(schema, refused)
    if body.startswith(SINGLE_OBJECT) and len(body) >= 10:
        print_ = body[2:10].hex()
        schema = known().by_fingerprint.get(print_)
        if schema is None:
            raise refused(f"no uploaded Avro schema has the fingerprint {print_}")
        return body[:10], _bounded_schema(schema, refused)
    if body.startswith(CONFLUENT) and len(body) >= 5:
        number = int.from_bytes(body[1:5], "big")
        schema = known().by_id.get(number)
        if schema is None:
            raise refused(f"no uploaded Avro schema has the registry id {number}")
        return body[:5], _bounded_schema(schema, refused)
    raise refused("no schema named: Avro is read in Confluent's wire format, the single-object encoding, "
                  "an object container file, or with the schema a mapping names")


def _library(schema: Any) -> Any:
    """The reader for ``schema``: fastavro's compiled one, its pure-Python one for a recursive schema."""
    return avro_read if _recursive(schema) else fastavro


def _recursive(schema: Any) -> bool:
    return _names_itself(json.dumps(schema, sort_keys=True))


@cache
def _names_itself(schema_text: str) -> bool:
    """Whether a named type of the schema (parsed, as JSON) is named again inside itself."""
    def walk(node: Any, inside: frozenset[str]) -> bool:
        if isinstance(node, str):
            return node in inside
        if isinstance(node, list):
            return any(walk(item, inside) for item in node)
        if not isinstance(node, dict):
            return False
        if isinstance(node.get("name"), str) and node.get("type") in ("record", "error", "enum", "fixed"):
            inside = inside | {node["name"]}
        return any(walk(value, inside) for key, value in node.items() if key not in ("name", "namespace", "doc",
                                                                                      "aliases", "default"))

    parsed = json.loads(schema_text)
    if isinstance(parsed, dict):
        parsed = {key: value for key, value in parsed.items() if key != "__named_schemas"}
    return walk(parsed, frozenset())


def _bounded_schema(schema: Any, refused: type[Exception]) -> Any:
    if _takes_no_bytes_in_a_list(json.dumps(schema, sort_keys=True)):
        raise refused("its schema has a list or map of values that take no bytes (a body could declare "
                      "billions): not read")
    return schema


@cache
def _takes_no_bytes_in_a_list(schema_text: str) -> bool:
    """Whether an array's items or a map's values may take no bytes (a parsed schema, as JSON)."""
    named: dict[str, Any] = {}

    def empty(node: Any, seen: frozenset[str]) -> bool:
        if isinstance(node, str):
            if node in named and node not in seen:
                return empty(named[node], seen | {node})
            return node == "null"
        if isinstance(node, list):
            return False  # a union's branch index takes a byte
        if not isinstance(node, dict):
            return False
        kind = node.get("type")
        if isinstance(node.get("name"), str):
            named[node["name"]] = node
        if kind == "record":
            return all(empty(item["type"], seen) for item in node.get("fields", []))
        if kind == "fixed":
            return node.get("size") == 0
        return kind == "null" or (not isinstance(kind, str) and empty(kind, seen))

    def walk(node: Any) -> bool:
        if isinstance(node, list):
            return any(walk(item) for item in node)
        if not isinstance(node, dict):
            return False
        if isinstance(node.get("name"), str):
            named[node["name"]] = node
        if node.get("type") == "array" and empty(node.get("items"), frozenset()):
            return True
        if node.get("type") == "map" and empty(node.get("values"), frozenset()):
            return True
        return any(walk(item) for item in node.values())

    return walk(json.loads(schema_text))


def _records(body: bytes) -> Any:
    """An object container file's records (at most MAX_ITEMS), with the schema it carries."""
    try:
        header = avro_read.reader(io.BytesIO(body))  # its header read in Python: the schema is the body's
        _bounded_schema(header.writer_schema, Unreadable)
        reader: Any = header if _recursive(header.writer_schema) else fastavro.reader(io.BytesIO(body))
        records: list[Any] = []
        for record in reader:
            if len(records) == MAX_ITEMS:
                raise Unreadable(f"more than {MAX_ITEMS} records")
            records.append(record)
    except Unreadable:
        raise
    except (ValueError, TypeError, KeyError, IndexError, EOFError, StopIteration, RecursionError,
            MemoryError, OverflowError, UnicodeDecodeError, SchemaParseException) as exc:
        raise Unreadable(f"not an Avro object container file: {type(exc).__name__}") from None
    return bounded({"records": records})


def _container(datum: Any, like: bytes) -> bytes:
    """The edited records as a container file with the schema and codec of ``like``."""
    reader = avro_read.reader(io.BytesIO(like))
    records = datum.get("records") if isinstance(datum, dict) else None
    if not isinstance(records, list):
        raise Unwritable('an Avro object container file is edited as {"records": [...]}')
    records = [_check(record, reader.writer_schema) for record in records]
    out = io.BytesIO()
    avro_write.writer(out, reader.writer_schema, records, codec=reader.codec)
    return out.getvalue()


def _check(datum: Any, schema: Any) -> Any:
    """``datum`` as the schema's logical types take it (a time shown as text is a time again),
    or Unwritable naming the fields that do not fit ``schema``."""
    datum = _typed(datum, schema, schema.get("__named_schemas", {}) if isinstance(schema, dict) else {})
    if isinstance(schema, dict) and schema.get("type") == "record" and isinstance(datum, dict):
        fields = schema.get("fields", [])
        missing = [item["name"] for item in fields if item["name"] not in datum and "default" not in item]
        unknown = sorted(set(datum) - {item["name"] for item in fields})
        if missing or unknown:
            raise Unwritable("the edit does not fit its Avro schema: " + "; ".join(
                [f"{schema['name']}.{name} is missing" for name in missing]
                + [f"{schema['name']} has no field {name}" for name in unknown]))
    try:
        avro_validation.validate(datum, schema, raise_errors=True, strict=True)
    except ValidationError as exc:
        said = "; ".join(_said(error) for error in exc.errors) or "it does not fit"
        raise Unwritable(f"the edit does not fit its Avro schema: {said}") from None
    except (ValueError, TypeError, KeyError, RecursionError) as exc:
        raise Unwritable(f"the edit does not fit its Avro schema: {exc}") from None
    return datum


def _said(error: Any) -> str:
    """One of fastavro's validation errors, short: the field and the type it expects."""
    text = str(error)
    path, _, rest = text.partition(" is <")
    expected = rest.rpartition(" expected ")[2]
    return f"{path or 'the record'} must be {expected[:120]}" if rest else text[:200]


#: Logical types read as values that are written back from the text the reader shows.
_FROM_TEXT = {
    "timestamp-millis": datetime.fromisoformat, "timestamp-micros": datetime.fromisoformat,
    "local-timestamp-millis": datetime.fromisoformat, "local-timestamp-micros": datetime.fromisoformat,
    "date": date.fromisoformat, "time-millis": time.fromisoformat, "time-micros": time.fromisoformat,
    "decimal": Decimal,
}


def _typed(datum: Any, schema: Any, named: dict[str, Any]) -> Any:
    """``datum`` with the text of logical types (times, dates, decimals) made their values again,
    where the schema has them; anything else as it is (the validation decides)."""
    if isinstance(schema, str):
        return _typed(datum, named[schema], named) if schema in named else datum
    if isinstance(schema, list):
        for branch in schema:
            typed = _typed(datum, branch, named)
            if typed is not datum:
                return typed
        return datum
    if not isinstance(schema, dict):
        return datum
    kind, logical = schema.get("type"), schema.get("logicalType")
    if logical in _FROM_TEXT and isinstance(datum, str):
        try:
            return _FROM_TEXT[logical](datum)
        except (ValueError, ArithmeticError):
            return datum
    if kind == "record" and isinstance(datum, dict):
        fields = {item["name"]: item["type"] for item in schema.get("fields", [])}
        return {key: _typed(value, fields[key], named) if key in fields else value for key, value in datum.items()}
    if kind == "array" and isinstance(datum, list):
        return [_typed(item, schema["items"], named) for item in datum]
    if kind == "map" and isinstance(datum, dict):
        return {key: _typed(value, schema["values"], named) for key, value in datum.items()}
    if isinstance(kind, (dict, list)):
        return _typed(datum, kind, named)
    return datum
