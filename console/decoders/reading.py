"""A letter's body read in its format: which format (its content type first, then the first
bytes), and the value as JSON text, which is what pages show, the search rows hold and the
masks apply to (so a JSON path masks a decoded field as it masks a JSON body's)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from console.decoders import KINDS, schemas
from console.decoders.base import MAX_BYTES, BodyFormat, Said, Unreadable, Unwritable
from console.decoders.schemas import NOWHERE, Where
from console.letters import compression

#: Header names that may say a body's content type, lower case.
HEADER_NAMES = ("content-type", "content_type")


@dataclass(frozen=True)
class Reading:
    """A body read (``text`` its value as JSON, or XML laid out; None when it did not read,
    ``error`` saying why) in the format ``name``."""

    name: str
    label: str
    text: bytes | None
    error: str = ""
    unsafe: bool = False
    value: Any = None

    @property
    def note(self) -> str:
        """What a reader is told about the body they see."""
        if self.text is None:
            return f"Said to be {self.label}, but it does not read ({self.error}): shown as stored."
        if self.unsafe:
            return (f"A {self.label}: never loaded here (loading it would run code). Shown is what it would "
                    "load, and its opcodes.")
        return f"Stored as {self.label}; shown read, as JSON."


def said_of(properties: Mapping[str, Any] | None, headers: Mapping[str, Any] | None,
            where: Where = NOWHERE) -> Said:
    """What a letter says of its body: the content type it names (AMQP's property, else a
    header), its parameters, and its headers; and the format and message type the first mapping
    that names the letter (``where`` it is, its headers) gives."""
    found: Any = properties.get("content_type") if isinstance(properties, Mapping) else None
    if not found and isinstance(headers, Mapping):
        found = next((value for name, value in headers.items() if str(name).lower() in HEADER_NAMES), None)
    parts = found.split(";") if isinstance(found, str) else [""]
    parameters = {}
    for part in parts[1:]:
        name, _, value = part.partition("=")
        parameters[name.strip().lower()] = value.strip().strip('"')
    headers = headers if isinstance(headers, Mapping) else {}
    mapping = next((mapped for mapped in schemas.mapped() if mapped.applies(where, headers)), None)
    return Said(parts[0].strip().lower(), parameters, headers, *((mapping.format, mapping.message_type)
                                                                  if mapping is not None else ()))


def format_of(body: bytes, said: Said) -> tuple[str, BodyFormat] | None:
    """The format a body is in, by the content type the letter names, else by an admin's
    mapping, else by its first bytes; None for JSON, text and whatever no format names."""
    formats = [(name, KINDS.get(name)) for name in KINDS]
    if said.content_type:
        for name, found in formats:
            if said.content_type in found.content_types:
                return name, found
    if said.format in KINDS:
        return said.format, KINDS.get(said.format)
    if said.content_type.startswith(("text/plain", "application/json")):
        return None
    return next(((name, found) for name, found in formats if found.recognises(body)), None)


def read(body: bytes, properties: Mapping[str, Any] | None, headers: Mapping[str, Any] | None,
         where: Where = NOWHERE) -> Reading | None:
    """The body read in its format, or None when no format names it (JSON, text, unknown)."""
    if not body:
        return None
    with schemas.one_look():
        return _read(body, properties, headers, where)


def _read(body: bytes, properties: Mapping[str, Any] | None, headers: Mapping[str, Any] | None,
          where: Where) -> Reading | None:
    said = said_of(properties, headers, where)
    named = format_of(body, said)
    if named is None:
        return None
    name, found = named
    if len(body) > MAX_BYTES:
        return Reading(name, found.label, None, f"over {MAX_BYTES // 1024} KiB", found.unsafe)
    try:
        value = found.read(body, said)
    except Unreadable as exc:
        return Reading(name, found.label, None, str(exc), found.unsafe)
    text = value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)
    return Reading(name, found.label, text.encode("utf-8"), "", found.unsafe, value)


def read_stored(body: bytes, properties: Mapping[str, Any] | None, headers: Mapping[str, Any] | None,
                where: Where = NOWHERE) -> Reading | None:
    """A letter's stored body read in its format, decompressed first (console.letters.compression)."""
    return read(compression.readable(body, properties, headers), properties, headers, where)


def readable(body: bytes, properties: Mapping[str, Any] | None, headers: Mapping[str, Any] | None,
             where: Where = NOWHERE) -> bytes:
    """The body as people read it: decompressed, then read in its format; as stored where
    neither applies or it does not read."""
    body = compression.readable(body, properties, headers)
    reading = read(body, properties, headers, where)
    return reading.text if reading is not None and reading.text is not None else body


def first_bytes() -> tuple[bytes, ...]:
    """Every first bytes that may say a registered format (BodyFormat.starts: its magic, and
    Confluent's Avro framing of each registry id uploaded), for the database's proposal."""
    return tuple(sorted({prefix for name in KINDS for prefix in KINDS.get(name).starts() if prefix}))


def where_of(letter: Any) -> Where:
    """Where a letter (a console.models.DeadLetter) is, for the mappings."""
    return Where(letter.place_id, letter.origin_queue or "")


def content_types() -> list[str]:
    """Every content type a registered format takes (the database's proposal of letters to read)."""
    return sorted({content_type for name in KINDS for content_type in KINDS.get(name).content_types})


def writes(body: bytes, properties: Mapping[str, Any] | None, headers: Mapping[str, Any] | None,
           where: Where = NOWHERE) -> Reading | None:
    """The stored body read, when it is in a format the console writes back (an edit of its
    value can be sent in the format): None otherwise."""
    reading = read_stored(body, properties, headers, where)
    if reading is None or reading.text is None or not KINDS.get(reading.name).writes:
        return None
    return reading


def written(value: Any, stored: bytes, properties: Mapping[str, Any] | None,
            headers: Mapping[str, Any] | None, where: Where = NOWHERE) -> bytes:
    """An edited ``value`` written as the ``stored`` body was: in its format, with its message
    type, schema and framing, compressed again as it was. Unwritable when the body is in no
    format the console writes, or the value does not fit its schema (naming the field)."""
    decoded = compression.read(stored, properties, headers)
    body = decoded.body if decoded is not None and decoded.body is not None else stored
    with schemas.one_look():
        said = said_of(properties, headers, where)
        named = format_of(body, said)
        if named is None or not named[1].writes:
            raise Unwritable("the letter's body is in no format the console writes: edit the body itself")
        out = named[1].write(value, body, said)
    return compression.encode(out, decoded) if decoded is not None and decoded.ok else out
