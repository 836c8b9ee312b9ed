"""The frames of a publish written in one pass, byte for byte as pamqp writes them.

pamqp encodes a content header through a call per property and two per header value, each
checking its type again, and wraps every frame through ``pamqp.frame.marshal``: a large part
of a replay's publisher's work per message (basic.publish and a dead letter's content header;
see benchmarks/README.md, publish_frames.py). ``publish_frames`` writes the same bytes:
basic.publish to the default exchange, the content header of a ``Basic.Properties``
(``content_header``), the body in frames of at most ``frame_max``.
A table key is written sorted, an integer in the smallest type that holds it, a float as
32 bits, as pamqp does. Anything else (a subclass of a plain type, a key longer than 128
bytes, a value out of range, a type pamqp would refuse) is written by pamqp itself, so it is
refused, or not, exactly as before. tests/logic/test_amqp_encoding.py checks both on
generated messages.
"""

from __future__ import annotations

import struct
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from pamqp import commands as spec
from pamqp.constants import FRAME_BODY, FRAME_END, FRAME_HEADER, FRAME_METHOD
from pamqp.frame import marshal
from pamqp.header import ContentHeader

_FRAME = struct.Struct(">BHI")
_END = bytes([FRAME_END])
_PUBLISH = struct.pack(">IH", spec.Basic.Publish.index, 0) + b"\x00"  # ticket 0, exchange ""
_HEADER = struct.Struct(">HxxQH")  # class id, weight 0, body size, flags
_BASIC = spec.Basic.frame_id  # the content header's class: basic
_U32 = struct.Struct(">I").pack
_I8 = struct.Struct(">b").pack
_I16 = struct.Struct(">h").pack
_U16 = struct.Struct(">H").pack
_I32 = struct.Struct(">l").pack
_I64 = struct.Struct(">q").pack
_F32 = struct.Struct(">f").pack
_U64 = struct.Struct(">Q").pack
_PROPERTIES = [(name, getattr(spec.Basic.Properties, "_" + name), spec.Basic.Properties.flags[name])
               for name in spec.Basic.Properties.__slots__]


class _Unusual(Exception):
    """What pamqp writes instead."""


def publish_frames(channel: int, routing_key: str, header: bytes, body: bytes, frame_max: int) -> bytes:
    """basic.publish (default exchange, ``mandatory``), the content header frame ``header``
    (``content_header``) and the body in frames of at most ``frame_max`` bytes, as
    ``pamqp.frame.marshal`` writes them (and aiormq splits a body)."""
    key = routing_key.encode("utf-8")
    if len(key) > 255:
        raise TypeError("string exceeds maximum length of 255 bytes")
    mandatory = b"\x01"
    frames = [_frame(FRAME_METHOD, channel, _PUBLISH + bytes([len(key)]) + key + mandatory), header]
    for start in range(0, len(body), frame_max):
        frames.append(_frame(FRAME_BODY, channel, body[start:start + frame_max]))
    return b"".join(frames)


def content_header(channel: int, properties: spec.Basic.Properties, body_size: int) -> bytes:
    """A content header frame, as ``pamqp.frame.marshal(ContentHeader(...), channel)`` writes it."""
    try:
        flags, parts = 0, []
        for name, kind, flag in _PROPERTIES:
            value = getattr(properties, name)
            if value is None or value == "":
                continue
            flags |= flag
            if kind == "shortstr":
                parts.append(_shortstr(value))
            elif kind == "table":
                parts.append(_table(value))
            elif kind == "octet" and type(value) is int and 0 <= value <= 255:
                parts.append(bytes([value]))
            elif kind == "timestamp" and type(value) is datetime:
                parts.append(_U64(_seconds(value)))
            else:
                raise _Unusual
        payload = _HEADER.pack(_BASIC, body_size, flags) + b"".join(parts)
    except (_Unusual, struct.error, OverflowError, ValueError, TypeError):
        return marshal(ContentHeader(properties=properties, body_size=body_size), channel)
    return _frame(FRAME_HEADER, channel, payload)


def _frame(kind: int, channel: int, payload: bytes) -> bytes:
    return _FRAME.pack(kind, channel, len(payload)) + payload + _END


def _shortstr(value: Any) -> bytes:
    if type(value) is not str:
        raise _Unusual
    raw = value.encode("utf-8")
    if len(raw) > 255:
        raise _Unusual
    return bytes([len(raw)]) + raw


def _seconds(value: datetime) -> int:
    if value.tzinfo is None or value.tzinfo.utcoffset(value) is None:
        value = value.replace(tzinfo=UTC)  # pamqp takes a naive datetime for UTC
    return int(value.timestamp())


def _table(table: Any) -> bytes:
    if type(table) is not dict:
        raise _Unusual
    if not table:
        return b"\x00\x00\x00\x00"
    parts = []
    for key in sorted(table):
        if type(key) is not str:
            raise _Unusual
        raw = key.encode("utf-8")
        if len(raw) > 128:
            raise _Unusual  # pamqp truncates it, with a warning
        value = table[key]
        if type(value) is str:  # most headers: written here rather than in a call of its own
            text = value.encode("utf-8")
            parts.append(bytes([len(raw)]) + raw + b"S" + _U32(len(text)) + text)
        else:
            parts.append(bytes([len(raw)]) + raw + _value(value))
    inner = b"".join(parts)
    return _U32(len(inner)) + inner


def _value(value: Any) -> bytes:
    kind = type(value)
    if kind is str:
        raw: bytes = value.encode("utf-8")
        return b"S" + _U32(len(raw)) + raw
    if kind is int:
        if -128 <= value <= 127:
            return b"b" + _I8(value)
        if -32768 <= value <= 32767:
            return b"s" + _I16(value)
        if 0 <= value <= 65535:
            return b"u" + _U16(value)
        if -2147483648 <= value <= 2147483647:
            return b"I" + _I32(value)
        if 0 <= value <= 4294967295:
            return b"i" + _U32(value)
        return b"l" + _I64(value)  # struct.error beyond 64 bits: pamqp's TypeError
    if kind is dict:
        return b"F" + _table(value)
    if kind is list:
        inner = b"".join(_value(item) for item in value)
        return b"A" + _U32(len(inner)) + inner
    if value is None:
        return b"V"
    if kind is bool:
        return b"t" + (b"\x01" if value else b"\x00")
    if kind is datetime:
        return b"T" + _U64(_seconds(value))
    if kind is bytearray:
        blob: bytearray = value
        return b"x" + _U32(len(blob)) + blob
    if kind is float:
        return b"f" + _F32(value)
    if kind is Decimal:
        exponent = value.as_tuple().exponent
        if not isinstance(exponent, int):
            raise _Unusual
        scale, mantissa = (0, int(value)) if exponent > 0 else (-exponent, int(value.scaleb(-exponent)))
        if not 0 <= scale <= 255:
            raise _Unusual
        return b"D" + struct.pack(">Bi", scale, mantissa)  # struct.error out of range: pamqp's TypeError
    raise _Unusual

