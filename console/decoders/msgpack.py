"""MessagePack (``msgpack``), Celery's ``application/x-msgpack`` included."""

from __future__ import annotations

from typing import Any

import msgpack as library

from console.decoders.base import MAX_BYTES, MAX_ITEMS, BodyFormat, Said, Unreadable, bounded, unbounded


class MessagePack(BodyFormat):
    label = "MessagePack"
    content_types = ("application/x-msgpack", "application/msgpack", "application/vnd.msgpack")
    writes = True

    def read(self, body: bytes, said: Said) -> Any:
        try:
            # Declared lengths bounded before anything is allocated for them.
            value = library.unpackb(body, raw=False, strict_map_key=False,
                                    max_str_len=MAX_BYTES, max_bin_len=MAX_BYTES, max_array_len=MAX_ITEMS,
                                    max_map_len=MAX_ITEMS, max_ext_len=MAX_BYTES)
        except (ValueError, TypeError, library.ExtraData, library.FormatError, library.StackError,
                RecursionError, UnicodeDecodeError) as exc:
            raise Unreadable(f"not MessagePack: {type(exc).__name__}") from None
        return bounded(value)

    def write(self, value: Any, like: bytes, said: Said) -> bytes:
        return bytes(library.packb(unbounded(value), use_bin_type=True))
