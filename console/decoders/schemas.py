"""The schemas an admin uploaded, as the formats that need one read them (Protobuf's descriptor
sets, Avro's schemas): handed over by console.services.body_schemas once Django is ready (this
package reads no database), and parsed once per change of the uploads (:func:`parsed`)."""

from __future__ import annotations

import threading
from collections.abc import Callable
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


def _none(kind: str) -> list[Upload]:
    return []


def _no_key() -> str:
    return ""


#: The uploads of a kind ("protobuf", "avro"), oldest first; and a key that changes when any
#: upload does (one small query). Set by console.services.body_schemas.connect.
uploads: Callable[[str], list[Upload]] = _none
uploads_key: Callable[[], str] = _no_key

_lock = threading.Lock()
_parsed: dict[str, tuple[str, Any]] = {}


def parsed(kind: str, build: Callable[[list[Upload]], T]) -> T:
    """What ``build`` makes of the uploads of ``kind``, made again only when the uploads change."""
    key = uploads_key()
    with _lock:
        kept = _parsed.get(kind)
        if kept is None or kept[0] != key:
            kept = _parsed[kind] = (key, build(uploads(kind)))
        made: T = kept[1]
        return made
