"""The frames a delivery is made of, decoded in one pass over the frame's bytes, to exactly
the objects pamqp makes of them.

pamqp decodes a field table by slicing the rest of the frame for every value it reads (a copy
of the remaining bytes per header, per x-death entry, per nested value), through a dispatch of
two calls per value: a dead letter's content header (x-death, x-first-death-*, an exception's
message and stack) was the largest single piece of a capture reader's work (see
benchmarks/README.md, frame_reader.py). ``unmarshal`` here reads the two frames every delivery starts with,
``basic.deliver`` and its content header, with offsets into the one ``bytes`` object and
precompiled structs, and builds the same pamqp objects (``Basic.Deliver``, ``ContentHeader``
with ``Basic.Properties``) with the same values, types included: a long string that is not
UTF-8 stays ``bytes``, a byte array is a ``bytearray``, a decimal is pamqp's ``Decimal``, a
timestamp above 2106 is read as milliseconds. Every other frame, and any frame this reader
finds malformed in any way (a length past its end, an unknown type, a name that is not UTF-8,
nesting too deep), goes to pamqp itself, so that a hostile frame fails, or does not, exactly
as it did. tests/logic/test_amqp_decoding.py checks both on generated tables.
"""

from __future__ import annotations

import datetime
import decimal
import functools
import struct
from collections.abc import Callable
from typing import Any

import pamqp.frame
from pamqp import commands as spec
from pamqp.constants import FRAME_HEADER, FRAME_METHOD
from pamqp.header import ContentHeader

_DELIVER = struct.pack(">I", spec.Basic.Deliver.index)  # class 60, method 60
_FRAME = struct.Struct(">BHI")
_CONTENT = struct.Struct(">HHQH")  # class id, weight, body size, first flag word
_U16 = struct.Struct(">H").unpack_from
_U32 = struct.Struct(">I").unpack_from
_I8 = struct.Struct(">b").unpack_from
_I16 = struct.Struct(">h").unpack_from
_I32 = struct.Struct(">l").unpack_from
_I64 = struct.Struct(">q").unpack_from
_U64 = struct.Struct(">Q").unpack_from
_F32 = struct.Struct(">f").unpack_from
_F64 = struct.Struct(">d").unpack_from
_UTC = datetime.UTC
_TEN = decimal.Decimal(10)

#: Basic.Properties' attributes in flag order (the highest bit first), with their types.
_PROPERTIES = [(name, getattr(spec.Basic.Properties, "_" + name), spec.Basic.Properties.flags[name])
               for name in spec.Basic.Properties.__slots__]
_DEFAULTS = {name: None for name, _, _ in _PROPERTIES} | {"cluster_id": ""}


class _Malformed(Exception):
    """What this reader does not decide: pamqp decodes the frame instead."""


def unmarshal(frame: bytes) -> tuple[int, int, Any]:
    """``pamqp.frame.unmarshal(frame)``, with the frames of a delivery read in one pass.

    ``frame`` is one whole frame: its seven header bytes, its payload and the end octet."""
    kind = frame[0]
    if kind == FRAME_HEADER or (kind == FRAME_METHOD and frame[7:11] == _DELIVER):
        try:
            size = _FRAME.unpack_from(frame)[2]
            if len(frame) != size + 8 or frame[-1] != 0xCE:
                raise _Malformed
            value = _content_header(frame, 7, 7 + size) if kind == FRAME_HEADER else _deliver(frame, 11, 7 + size)
        except (_Malformed, struct.error, IndexError, ValueError, OverflowError, OSError, RecursionError):
            pass  # pamqp decides
        else:
            return len(frame), _U16(frame, 1)[0], value
    return pamqp.frame.unmarshal(frame)


def _shortstr(data: bytes, at: int, end: int) -> tuple[str, int]:
    stop = at + 1 + data[at]
    if stop > end:
        raise _Malformed
    return data[at + 1:stop].decode("utf-8"), stop


def _deliver(data: bytes, at: int, end: int) -> spec.Basic.Deliver:
    """basic.deliver's arguments, set as pamqp's unmarshal sets them (without validating)."""
    method = spec.Basic.Deliver.__new__(spec.Basic.Deliver)
    method.consumer_tag, at = _shortstr(data, at, end)
    if at + 9 > end:
        raise _Malformed
    method.delivery_tag = _I64(data, at)[0]
    method.redelivered = (data[at + 8] & 1) != 0
    method.exchange, at = _shortstr(data, at + 9, end)
    method.routing_key, at = _shortstr(data, at, end)
    if at != end:
        raise _Malformed
    return method


def _content_header(data: bytes, at: int, end: int) -> ContentHeader:
    class_id, weight, body_size, flags = _CONTENT.unpack_from(data, at)
    at += 14
    if flags & 1:
        raise _Malformed  # a second flag word: no property of basic needs one
    properties = spec.Basic.Properties.__new__(spec.Basic.Properties)
    for name, default in _DEFAULTS.items():
        setattr(properties, name, default)
    value: Any
    for name, kind, flag in _PROPERTIES:
        if not flags & flag:
            continue
        if kind == "shortstr":
            value, at = _shortstr(data, at, end)
        elif kind == "table":
            size = _U32(data, at)[0]
            at += 4
            if at + size > end:
                raise _Malformed
            value = _table(data, at, at + size)
            at += size
        elif kind == "octet":
            if at >= end:
                raise _Malformed
            value, at = data[at], at + 1
        elif kind == "timestamp":
            if at + 8 > end:
                raise _Malformed
            value, at = _timestamp(_U64(data, at)[0]), at + 8
        else:
            raise _Malformed
        setattr(properties, name, value)
    if at != end:
        raise _Malformed
    header = ContentHeader.__new__(ContentHeader)
    header.class_id, header.weight, header.body_size, header.properties = class_id, weight, body_size, properties
    return header


@functools.lru_cache(maxsize=1024)
def _timestamp(seconds: int) -> datetime.datetime:
    """pamqp's datetime for an AMQP timestamp; anything above the year 2106 is likely
    milliseconds. Cached: the letters of a capture died within seconds of each other, and a
    datetime is immutable."""
    return datetime.datetime.fromtimestamp(seconds / 1000.0 if seconds > 0xFFFFFFFF else seconds, tz=_UTC)


def _table(data: bytes, at: int, end: int) -> dict[str, Any]:
    table: dict[str, Any] = {}
    while at < end:
        stop = at + 1 + data[at]
        if stop >= end:
            raise _Malformed
        key = data[at + 1:stop].decode("utf-8")
        if data[stop] == 83:  # S, most headers: read here rather than in a call of its own
            at = stop + 5 + _U32(data, stop + 1)[0]
            if at > end:
                raise _Malformed
            raw = data[stop + 5:at]
            try:
                table[key] = raw.decode("utf-8")
            except UnicodeDecodeError:
                table[key] = raw
        else:
            table[key], at = _value(data, stop, end)
    return table


def _value(data: bytes, at: int, end: int) -> tuple[Any, int]:
    """One field value at ``at`` (its type octet) and where the next one starts; the value must
    end by ``end``, its table's or array's end. A long string that is not UTF-8 stays bytes."""
    kind = data[at]
    at += 1
    width, read = _FIXED.get(kind, (0, None))
    if read is not None:
        stop = at + width
        if stop > end:
            raise _Malformed
        return read(data, at), stop
    if kind == 86 or kind == 0:  # V, and a NUL type seen in the wild: void
        return None, at
    if kind not in _SIZED:
        raise _Malformed
    stop = at + 4 + _U32(data, at)[0]
    if stop > end:
        raise _Malformed
    at += 4
    if kind == 70:  # F
        return _table(data, at, stop), stop
    if kind == 65:  # A
        items = []
        while at < stop:
            item, at = _value(data, at, stop)
            items.append(item)
        return items, stop
    raw = data[at:stop]
    if kind == 120:  # x: byte array
        return bytearray(raw), stop
    try:  # S
        return raw.decode("utf-8"), stop
    except UnicodeDecodeError:
        return raw, stop


#: The type octets of values that start with their length: S, F, A, x.
_SIZED = {83, 70, 65, 120}


def _fixed(unpack: Callable[[bytes, int], tuple[Any, ...]]) -> Callable[[bytes, int], Any]:
    return lambda data, at: unpack(data, at)[0]


def _decimal(data: bytes, at: int) -> decimal.Decimal:
    return decimal.Decimal(_I32(data, at + 1)[0]) * (_TEN ** -data[at])


#: Type octet -> (width, reader) of the fixed-width field values, as pamqp decodes them.
_FIXED: dict[int, tuple[int, Callable[[bytes, int], Any]]] = {
    ord("t"): (1, lambda data, at: bool(data[at])),
    ord("b"): (1, _fixed(_I8)),
    ord("B"): (1, lambda data, at: data[at]),
    ord("s"): (2, _fixed(_I16)),
    ord("u"): (2, _fixed(_U16)),
    ord("I"): (4, _fixed(_I32)),
    ord("i"): (4, _fixed(_U32)),
    ord("l"): (8, _fixed(_I64)),
    ord("L"): (8, _fixed(_I64)),
    ord("f"): (4, _fixed(_F32)),
    ord("d"): (8, _fixed(_F64)),
    ord("D"): (5, _decimal),
    ord("T"): (8, lambda data, at: _timestamp(_U64(data, at)[0])),
}
