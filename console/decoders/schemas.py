"""The schemas an admin uploaded, as the formats that need one read them (Protobuf's descriptor
sets, Avro's schemas), and the mappings an admin set (the format and message type of the bodies
of a place, an origin or a header value): handed over by console.services.body_schemas once
Django is ready (this package reads no database), and parsed once per change (:func:`parsed`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Upload:
    """One uploaded file: its name, its bytes as uploaded, and the schema registry's id it
    stands for (Confluent's wire format names a schema by it), where an admin gave one."""

    name: str
    data: bytes
    registry_id: int | None = None


@dataclass(frozen=True)
class Where:
    """Where a letter is: its place and its origin (what a mapping may name)."""

    place_id: int | None = None
    origin: str = ""


NOWHERE = Where()


@dataclass(frozen=True)
class Mapping:
    """The bodies of the letters it names (each of place, origin and header that is set) are in
    ``format``, of ``message_type`` (none said: as the letter says); their failure groups split
    by the value at ``group_path`` (console.services.group_keys), where one is set."""

    format: str
    message_type: str = ""
    place_id: int | None = None
    origin: str = ""
    header: str = ""
    header_value: str = ""
    group_path: str = ""

    def applies(self, where: Where, headers: Any) -> bool:
        if self.place_id is not None and self.place_id != where.place_id:
            return False
        if self.origin and self.origin != where.origin:
            return False
        return not self.header or (hasattr(headers, "get") and str(headers.get(self.header, "")) == self.header_value)


def _none(kind: str) -> list[Upload]:
    return []


def _no_mappings() -> list[Mapping]:
    return []


def _no_key() -> str:
    return ""


#: The uploads of a kind ("protobuf", "avro"), oldest first; the mappings, oldest first; and a
#: key that changes when any upload or mapping does (one small query). Set by
#: console.services.body_schemas.connect.
uploads: Callable[[str], list[Upload]] = _none
mappings: Callable[[], list[Mapping]] = _no_mappings
uploads_key: Callable[[], str] = _no_key

_lock = threading.Lock()
_parsed: dict[str, tuple[str, Any]] = {}


def parsed(kind: str, build: Callable[[list[Upload]], T]) -> T:
    """What ``build`` makes of the uploads of ``kind``, made again only when the uploads change."""
    return _kept(kind, lambda: build(uploads(kind)))


def mapped() -> list[Mapping]:
    """The mappings that name a format, read again only when they change; the closest first (one
    naming a header value before one naming an origin, before one naming a place alone), then
    the oldest."""
    return [found for found in _closest_first() if found.format]


def grouped() -> list[Mapping]:
    """The mappings that name a group path, the closest first, as :func:`mapped`."""
    return [found for found in _closest_first() if found.group_path]


def _closest_first() -> list[Mapping]:
    return _kept(" mappings", lambda: sorted(mappings(), key=lambda found: (
        not found.header, not found.origin, found.place_id is None)))


#: The key read once for a whole reading (:func:`one_look`), or None outside one.
_looked: ContextVar[str | None] = ContextVar("body_schemas_key", default=None)


@contextmanager
def one_look() -> Iterator[None]:
    """Within it, the uploads and mappings are taken as they were when it began: their key is
    read once (one small query), not once for each format, mapping or letter read."""
    if _looked.get() is not None:
        yield
        return
    token = _looked.set(uploads_key())
    try:
        yield
    finally:
        _looked.reset(token)


def _kept(name: str, make: Callable[[], T]) -> T:
    key = _looked.get()
    key = uploads_key() if key is None else key
    with _lock:
        kept = _parsed.get(name)
        if kept is None or kept[0] != key:
            kept = _parsed[name] = (key, make())
        made: T = kept[1]
        return made
