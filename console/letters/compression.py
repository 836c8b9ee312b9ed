"""Compressed bodies, decoded for people and compressed again after an edit.

A letter says its body is compressed in one of three places, read in this order:

* the AMQP property ``content_encoding`` (``gzip``, ``deflate``, ``zstd``; Spring AMQP's
  ``GZipPostProcessor`` and ``DeflaterPostProcessor`` write ``gzip:UTF-8``, the charset after
  a colon);
* a header named ``Content-Encoding`` (any case: STOMP, NATS and Redis letters carry it so);
* Celery's (kombu's) ``compression`` header: ``application/x-gzip`` (which kombu writes with
  ``zlib.compress``, a zlib stream despite its name) or ``application/zstd``.

Decoding is bounded (design invariant 7: content is hostile): a body that decodes to more than
``MAX_BYTES`` (bounded_json's bound) is ``too_large`` and is never expanded further, so a zip
bomb costs at most that much memory; data that does not decode is ``malformed``. Either way the
caller shows the stored bytes with a note, never a 500. ``gzip`` and ``deflate`` are read by
their bytes, not their label (a gzip member, a zlib stream or raw deflate), since senders mix
them up; an edited body is compressed again in the framing the original had.

Here, in the bottom layer (plain Python, no Django), because pages, search and edits read it.
"""

from __future__ import annotations

import gzip
import io
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import zstandard

from console.letters.bounded_json import MAX_BYTES

GZIP, DEFLATE, ZSTD = "gzip", "deflate", "zstd"
#: What each place's words mean (lower case; Spring's ``:charset`` tail is cut first).
_NAMES = {
    "gzip": GZIP, "x-gzip": GZIP, "deflate": DEFLATE, "zlib": DEFLATE, "zstd": ZSTD, "zstandard": ZSTD,
    # kombu's content types for its ``compression`` header
    "application/x-gzip": DEFLATE, "application/zstd": ZSTD, "application/x-zstd": ZSTD,
}
#: Header names that may say how a body is compressed, lower case (Celery's is ``compression``).
HEADER_NAMES = ("content-encoding", "content_encoding", "compression")

OK, TOO_LARGE, MALFORMED = "ok", "too_large", "malformed"
# Framings: how the compressed bytes are laid out, kept to compress an edit the same way.
_GZIP_MEMBER, _ZLIB_STREAM, _RAW_DEFLATE, _ZSTD_FRAME = "gzip", "zlib", "raw", "zstd"


@dataclass(frozen=True)
class Decoded:
    """A compressed body read: ``body`` the decoded bytes when ``status`` is OK (else None),
    ``encoding`` what the letter said (gzip, deflate, zstd)."""

    encoding: str
    status: str
    body: bytes | None = None
    framing: str = ""

    @property
    def ok(self) -> bool:
        return self.status == OK

    @property
    def note(self) -> str:
        """What a reader is told about the body they see."""
        if self.status == OK:
            return f"Stored {self.encoding}-compressed; shown decoded."
        if self.status == TOO_LARGE:
            return (f"Stored {self.encoding}-compressed and too large to decode (over "
                    f"{MAX_BYTES // (1024 * 1024)} MiB decoded): shown as stored.")
        return f"Said to be {self.encoding}-compressed, but does not decode: shown as stored."


def _name(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    return _NAMES.get(value.split(":", 1)[0].strip().lower())


def encoding_of(properties: Mapping[str, Any] | None, headers: Mapping[str, Any] | None) -> str | None:
    """The compression a letter's properties or headers name (gzip, deflate, zstd), or None."""
    if isinstance(properties, Mapping) and (found := _name(properties.get("content_encoding"))):
        return found
    if isinstance(headers, Mapping):
        for name, value in headers.items():
            if str(name).lower() in HEADER_NAMES and (found := _name(value)):
                return found
    return None


def read(body: bytes, properties: Mapping[str, Any] | None, headers: Mapping[str, Any] | None,
         *, partial: bool = False) -> Decoded | None:
    """A letter's body decoded when its properties or headers say it is compressed, else None."""
    encoding = encoding_of(properties, headers)
    return None if encoding is None or not body else decode(body, encoding, partial=partial)


def readable(body: bytes, properties: Mapping[str, Any] | None, headers: Mapping[str, Any] | None) -> bytes:
    """The body as people read it: decoded when compressed (and it decodes), else as stored."""
    decoded = read(body, properties, headers)
    return decoded.body if decoded is not None and decoded.body is not None else body


def readable_head(head: bytes, size: int, encoding: str | None, limit: int) -> tuple[bytes, int]:
    """The first bytes of a ``size``-byte body as people read it, for a preview, and the size
    to tell: a compressed head decoded (at most ``limit`` bytes of it; the size one more than
    them when more follows), any other head, or one that does not decode, as it is."""
    if encoding is None or not head:
        return head, size
    decoded = decode(head, encoding, limit=limit, partial=True)
    if decoded.body is None:
        return head, size
    whole = len(head) >= size and len(decoded.body) < limit
    return decoded.body, len(decoded.body) + (0 if whole else 1)


def decode(body: bytes, encoding: str, *, limit: int = MAX_BYTES, partial: bool = False) -> Decoded:
    """``body`` decoded, at most ``limit`` bytes of it (TOO_LARGE past them). ``partial``: a
    head for a preview, perhaps cut from a longer body: what decodes of it, up to ``limit``
    bytes, is OK."""
    try:
        if encoding == ZSTD:
            data, complete = _zstd(body, limit)
            framing = _ZSTD_FRAME
        else:
            framing = _framing(body)
            data, complete = _zlib(body, framing, limit)
    except (zlib.error, zstandard.ZstdError, EOFError, ValueError):
        return Decoded(encoding, MALFORMED)
    if len(data) > limit and not partial:
        return Decoded(encoding, TOO_LARGE)
    if not complete and not partial:
        return Decoded(encoding, MALFORMED)
    return Decoded(encoding, OK, data[:limit], framing)


def encode(body: bytes, like: Decoded) -> bytes:
    """``body`` compressed as the letter ``like`` was (same encoding and framing)."""
    if like.framing == _ZSTD_FRAME or like.encoding == ZSTD:
        return zstandard.ZstdCompressor().compress(body)
    if like.framing == _ZLIB_STREAM:
        return zlib.compress(body)
    if like.framing == _RAW_DEFLATE:
        packer = zlib.compressobj(wbits=-15)
        return packer.compress(body) + packer.flush()
    return gzip.compress(body, mtime=0)


def _framing(body: bytes) -> str:
    if body[:2] == b"\x1f\x8b":
        return _GZIP_MEMBER
    if len(body) >= 2 and body[0] & 0x0F == 8 and (body[0] << 8 | body[1]) % 31 == 0:
        return _ZLIB_STREAM
    return _RAW_DEFLATE


_WBITS = {_GZIP_MEMBER: 16 + 15, _ZLIB_STREAM: 15, _RAW_DEFLATE: -15}


def _zlib(body: bytes, framing: str, limit: int) -> tuple[bytes, bool]:
    """Decoded bytes (at most limit + 1) and whether the stream ended; gzip members in a row
    (what ``cat a.gz b.gz`` makes) are read one after the other."""
    out, rest = bytearray(), body
    while True:
        reader = zlib.decompressobj(_WBITS[framing])
        out += reader.decompress(rest, limit + 1 - len(out))
        if len(out) > limit:
            return bytes(out), True
        if not reader.eof:
            return bytes(out), False
        rest = reader.unused_data
        if framing != _GZIP_MEMBER or not rest:
            return bytes(out), not rest
        if rest[:2] != b"\x1f\x8b":
            raise ValueError("bytes after the last gzip member")


def _zstd(body: bytes, limit: int) -> tuple[bytes, bool]:
    """Decoded bytes (at most limit + 1), and whether they are all the frame said it holds."""
    with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(body), read_across_frames=True) as reader:
        data = reader.read(limit + 1)
    if len(data) > limit:
        return data, True
    size = zstandard.frame_content_size(body)
    return data, (size < 0 and bool(data or not body)) or size == len(data)
