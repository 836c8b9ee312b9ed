"""CBOR (``cbor2``)."""

from __future__ import annotations

from typing import Any

import cbor2

from console.decoders.base import BodyFormat, Said, Unreadable, bounded, unbounded


class Cbor(BodyFormat):
    label = "CBOR"
    content_types = ("application/cbor",)
    writes = True

    def read(self, body: bytes, said: Said) -> Any:
        try:
            # Semantic tags are left as tags (no tag hook builds objects from them).
            value = cbor2.loads(body)
        except (cbor2.CBORDecodeError, ValueError, TypeError, RecursionError, MemoryError, OverflowError) as exc:
            raise Unreadable(f"not CBOR: {type(exc).__name__}") from None
        return bounded(value)

    def write(self, value: Any, like: bytes, said: Said) -> bytes:
        return cbor2.dumps(unbounded(value))
