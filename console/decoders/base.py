"""What a body format is: how the console recognises a body written in it and reads it.

A format declares, in its own module of this package (registered in console.decoders):

- ``label``: what pages call it ("MessagePack");
- ``content_types``: the content types that name it (``application/x-msgpack``), compared
  without parameters and in any case; ``magic``: the first bytes that name it, where the format
  has them (a pickle's protocol opcode; several as a tuple), or ``recognises(body)`` where
  first bytes alone cannot say (Confluent's Avro: a zero byte and a schema id the console
  knows); a format no letter names is never tried; ``said``
  (:class:`Said`) is what the letter says of its body, where a format needs more than its bytes
  (a Protobuf message's type);
- ``read(body, said)``: the body as a JSON-like value (dicts with string keys, lists, strings,
  numbers, booleans, None), or :class:`Unreadable` saying why. It gets at most
  :data:`MAX_BYTES` and must bound its own work: depth, collection lengths, nothing run;
- ``unsafe``: the format can run code when loaded the usual way (pickle): the console never
  does, and says so;
- ``write(value, like, said)``, where the format can: ``value`` (as ``read`` gave it, edited)
  written back in the format as the body ``like`` was (its message type, schema and framing),
  or :class:`Unwritable` naming what does not fit. ``writes`` says whether it can;
- ``declares(upload)``, for a format read with schemas an admin uploads (Protobuf's descriptor
  sets, Avro's schemas; console.decoders.schemas): what the upload declares, or a Refusal.

The value is shown as JSON, searched, masked and matched as JSON text
(console.decoders.reading).
"""

from __future__ import annotations

import base64
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from console.refusals import Refusal

#: Bodies longer than this are shown as stored, unread.
MAX_BYTES = 1024 * 1024
#: A value nested deeper than this is refused (a hostile body's nesting).
MAX_DEPTH = 64
#: A container longer than this is refused (a hostile body's declared lengths).
MAX_ITEMS = 100_000


@dataclass(frozen=True)
class Said:
    """What a letter says of its body: its content type (lower case, no parameters), the type's
    parameters (names lower case), and its headers; and what an admin's mapping says of the
    bodies where the letter is (console.decoders.schemas.Mapping): their format and message type."""

    content_type: str = ""
    parameters: dict[str, str] = field(default_factory=dict)
    headers: Mapping[str, Any] = field(default_factory=dict)
    format: str = ""
    message_type: str = ""


class Unreadable(Exception):
    """The body does not read in the format: why, for the reader."""


class Unwritable(Refusal):
    """An edited value does not fit the format (its schema): which field, and why."""


class BodyFormat:
    label: ClassVar[str] = ""
    content_types: ClassVar[tuple[str, ...]] = ()
    magic: ClassVar[bytes | tuple[bytes, ...]] = b""
    unsafe: ClassVar[bool] = False
    writes: ClassVar[bool] = False

    def starts(self) -> tuple[bytes, ...]:
        """First bytes a body this format recognises may start with (the magic, and what
        ``recognises`` takes beyond it): the database's proposal of letters to read."""
        return self.magic if isinstance(self.magic, tuple) else (self.magic,) if self.magic else ()

    def recognises(self, body: bytes) -> bool:
        """Whether a body no content type names is in this format, by its first bytes."""
        return bool(self.magic) and body.startswith(self.magic)

    def read(self, body: bytes, said: Said) -> Any:
        raise NotImplementedError

    def write(self, value: Any, like: bytes, said: Said) -> bytes:
        raise Unwritable(f"{self.label} bodies are not written back by the console")

    def declares(self, upload: bytes) -> list[str]:
        """For a format read with uploaded schemas (console.decoders.schemas): what an upload
        declares (its message types, its schema's name), a Refusal saying why it is refused."""
        raise Unwritable(f"{self.label} takes no uploaded schemas")


def bounded(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON can hold it (bytes as base64 under ``$bytes``, other keys as text),
    Unreadable past :data:`MAX_DEPTH` or :data:`MAX_ITEMS`."""
    if depth > MAX_DEPTH:
        raise Unreadable(f"nested deeper than {MAX_DEPTH}")
    if isinstance(value, dict):
        if len(value) > MAX_ITEMS:
            raise Unreadable(f"a map of more than {MAX_ITEMS} entries")
        return {_key(key): bounded(item, depth + 1) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        if len(value) > MAX_ITEMS:
            raise Unreadable(f"a list of more than {MAX_ITEMS} items")
        return [bounded(item, depth + 1) for item in value]
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"$bytes": base64.b64encode(bytes(value)).decode("ascii")}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return str(value)  # a format's own types (a timestamp, a tag): as text


def unbounded(value: Any) -> Any:
    """What :func:`bounded` gave, as the format's library takes it again: ``{"$bytes": ...}``
    as bytes (Unwritable when it is not base64)."""
    if isinstance(value, dict):
        if set(value) == {"$bytes"} and isinstance(value["$bytes"], str):
            try:
                return base64.b64decode(value["$bytes"], validate=True)
            except ValueError:
                raise Unwritable("a $bytes value is not base64") from None
        return {key: unbounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [unbounded(item) for item in value]
    return value


def _key(key: Any) -> str:
    return key if isinstance(key, str) else str(bounded(key, MAX_DEPTH))
