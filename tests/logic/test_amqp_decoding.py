"""A delivery's frames read by console/brokers/rabbitmq/decoding.py come out exactly as pamqp
makes them, whatever the headers hold, and a malformed frame fails (or not) exactly as it did
with pamqp: the capture stores what pamqp would have given it, and the custody key made of it
does not change.

The tables are written here byte by byte, with every type RabbitMQ's errata lists (pamqp's own
encoder writes only some of them: no unsigned types, no doubles, no strings that are not UTF-8).
"""

from __future__ import annotations

import math
import re
import struct
from datetime import datetime
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st
from pamqp import commands as spec
from pamqp.body import ContentBody
from pamqp.frame import marshal
from pamqp.frame import unmarshal as pamqp_unmarshal
from pamqp.header import ContentHeader

from console.brokers.rabbitmq import decoding
from console.brokers.rabbitmq.decoding import unmarshal

FIXED = {  # type octet -> struct format, value strategy
    b"t": ("B", st.integers(0, 255)), b"b": (">b", st.integers(-128, 127)), b"B": ("B", st.integers(0, 255)),
    b"s": (">h", st.integers(-2 ** 15, 2 ** 15 - 1)), b"u": (">H", st.integers(0, 2 ** 16 - 1)),
    b"I": (">l", st.integers(-2 ** 31, 2 ** 31 - 1)), b"i": (">L", st.integers(0, 2 ** 32 - 1)),
    b"l": (">q", st.integers(-2 ** 63, 2 ** 63 - 1)), b"L": (">q", st.integers(-2 ** 63, 2 ** 63 - 1)),
    b"f": (">f", st.floats(width=32)), b"d": (">d", st.floats()),
    b"T": (">Q", st.integers(0, 2 ** 32 - 1) | st.integers(2 ** 32, 253_402_300_799_000)),
    b"D": (">Bi", st.tuples(st.integers(0, 30), st.integers(-2 ** 31, 2 ** 31 - 1) | st.sampled_from([0, 100, -2500]))),
}
texts = st.text(max_size=20).map(lambda text: text.encode("utf-8", "surrogatepass"))  # UTF-8 mostly
strings = texts | st.binary(max_size=20)
scalars = (st.sampled_from(sorted(FIXED)).flatmap(lambda kind: FIXED[kind][1].map(lambda value: (kind, value)))
           | strings.map(lambda raw: (b"S", raw)) | st.binary(max_size=12).map(lambda raw: (b"x", raw))
           | st.sampled_from([(b"V", None), (b"\x00", None)]))
keys = st.text(max_size=8).map(lambda text: text.encode("utf-8", "surrogatepass")[:255])
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4).map(lambda items: (b"A", items))
                      | st.lists(st.tuples(keys, inner), max_size=4).map(lambda pairs: (b"F", pairs)),
                      max_leaves=12)
tables = st.lists(st.tuples(keys, values), max_size=6)


def field(value) -> bytes:
    kind, content = value
    if kind in FIXED:
        fmt = FIXED[kind][0]
        return kind + (struct.pack(fmt, *content) if isinstance(content, tuple) else struct.pack(fmt, content))
    if kind in (b"S", b"x"):
        return kind + struct.pack(">I", len(content)) + content
    if kind == b"A":
        items = b"".join(field(item) for item in content)
        return kind + struct.pack(">I", len(items)) + items
    if kind == b"F":
        return kind + table(content)
    return kind


def table(pairs) -> bytes:
    inner = b"".join(bytes([len(key)]) + key + field(value) for key, value in pairs)
    return struct.pack(">I", len(inner)) + inner


def shortstr(raw: bytes) -> bytes:
    return bytes([len(raw)]) + raw


properties = st.fixed_dictionaries({"headers": tables}, optional={
    "content_type": texts, "content_encoding": texts,
    "delivery_mode": st.integers(0, 255), "priority": st.integers(0, 255), "correlation_id": texts,
    "reply_to": texts, "expiration": texts, "message_id": strings,
    "timestamp": FIXED[b"T"][1], "message_type": texts, "user_id": texts, "app_id": texts,
    "cluster_id": texts,
})


def header_frame(channel: int, body_size: int, props: dict) -> bytes:
    flags, parts = 0, []
    for name in spec.Basic.Properties.__slots__:
        if name not in props:
            continue
        flags |= spec.Basic.Properties.flags[name]
        value = props[name]
        kind = spec.Basic.Properties.amqp_type(name)
        parts.append(shortstr(value) if kind == "shortstr" else table(value) if kind == "table"
                     else bytes([value]) if kind == "octet" else struct.pack(">Q", value))
    payload = struct.pack(">HHQH", 60, 0, body_size, flags) + b"".join(parts)
    return struct.pack(">BHI", 2, channel, len(payload)) + payload + b"\xce"


def same(ours, theirs) -> bool:
    """Equal values of the same types: NaN equals NaN, a decimal keeps its exponent, a
    timestamp its zone."""
    if type(ours) is not type(theirs):
        return False
    if isinstance(ours, dict):
        return list(ours) == list(theirs) and all(same(ours[k], theirs[k]) for k in ours)
    if isinstance(ours, list):
        return len(ours) == len(theirs) and all(same(a, b) for a, b in zip(ours, theirs, strict=True))
    if isinstance(ours, float):
        return struct.pack(">d", ours) == struct.pack(">d", theirs) or (math.isnan(ours) and math.isnan(theirs))
    if isinstance(ours, Decimal):
        return ours.as_tuple() == theirs.as_tuple()
    if isinstance(ours, datetime):
        return ours == theirs and ours.tzinfo == theirs.tzinfo
    if isinstance(ours, (ContentHeader, spec.Basic.Deliver, spec.Basic.Properties, ContentBody)):
        names = {"class_id", "weight", "body_size", "properties"} if isinstance(ours, ContentHeader) else (
            {"value"} if isinstance(ours, ContentBody) else set(type(ours).__slots__))
        return all(same(getattr(ours, n, None), getattr(theirs, n, None)) for n in names)
    return ours == theirs


def outcome(decode, frame: bytes):
    try:
        return "ok", decode(frame)
    except Exception as error:  # noqa: BLE001 - what fails, and how, is what is compared
        return "raised", type(error), re.sub(r" at 0x[0-9a-f]+", "", str(error))


def assert_same_outcome(frame: bytes) -> None:
    ours, theirs = outcome(unmarshal, frame), outcome(pamqp_unmarshal, frame)
    assert ours[0] == theirs[0], (ours, theirs)
    if ours[0] == "ok":
        assert same(list(ours[1]), list(theirs[1])), (ours, theirs)
    else:
        assert ours[1:] == theirs[1:]


@settings(max_examples=400, deadline=None)
@given(properties, st.integers(0, 2 ** 63 - 1), st.integers(1, 65535))
def test_a_content_header_decodes_as_pamqp_decodes_it(props, body_size, channel):
    frame = header_frame(channel, body_size, props)
    assert_same_outcome(frame)
    if outcome(pamqp_unmarshal, frame)[0] == "ok":  # read in one pass, not handed to pamqp
        assert same(decoding._content_header(frame, 7, len(frame) - 1), pamqp_unmarshal(frame)[2])


@settings(max_examples=300, deadline=None)
@given(properties, st.data())
def test_a_damaged_content_header_fails_or_not_as_with_pamqp(props, data):
    frame = bytearray(header_frame(1, 10, props))
    for _ in range(data.draw(st.integers(1, 3))):
        frame[data.draw(st.integers(7, len(frame) - 2))] = data.draw(st.integers(0, 255))
    assert_same_outcome(bytes(frame))
    cut = data.draw(st.integers(8, len(frame) - 1))
    truncated = bytes(frame[:cut])
    assert_same_outcome(truncated[:3] + struct.pack(">I", len(truncated) - 7) + truncated[7:] + b"\xce")


@settings(max_examples=200, deadline=None)
@given(strings, st.integers(0, 2 ** 64 - 1), st.integers(0, 255), strings, strings, st.binary(max_size=2))
def test_a_deliver_frame_decodes_as_pamqp_decodes_it(tag, delivery_tag, bits, exchange, routing_key, extra):
    payload = (struct.pack(">I", spec.Basic.Deliver.index) + shortstr(tag) + struct.pack(">QB", delivery_tag, bits)
               + shortstr(exchange) + shortstr(routing_key) + extra)
    frame = struct.pack(">BHI", 1, 3, len(payload)) + payload + b"\xce"
    assert_same_outcome(frame)
    if not extra and outcome(pamqp_unmarshal, frame)[0] == "ok":
        assert same(decoding._deliver(frame, 11, len(frame) - 1), pamqp_unmarshal(frame)[2])


def test_a_deliver_frame_reads_its_delivery_tag():
    frame = marshal(spec.Basic.Deliver("ctag", 2 ** 40 + 7, True, "", "orders.dlq"), 3)
    consumed, channel, delivery = unmarshal(frame)
    assert (consumed, channel, type(delivery)) == (len(frame), 3, spec.Basic.Deliver)
    assert (delivery.consumer_tag, delivery.delivery_tag, delivery.redelivered, delivery.routing_key) == \
        ("ctag", 2 ** 40 + 7, True, "orders.dlq")


def test_a_header_nested_too_deep_fails_as_with_pamqp():
    nested = b"V"
    for _ in range(3000):  # {"k": {"k": ... None}}, written from the inside out
        entry = b"\x01k" + nested
        nested = b"F" + struct.pack(">I", len(entry)) + entry
    headers = b"\x04deep" + nested
    payload = struct.pack(">HHQH", 60, 0, 0, spec.Basic.Properties.flags["headers"]) + struct.pack(">I", len(headers))
    frame = struct.pack(">BHI", 2, 1, len(payload) + len(headers)) + payload + headers + b"\xce"
    ours, theirs = outcome(unmarshal, frame), outcome(pamqp_unmarshal, frame)
    assert ours[0] == theirs[0] == "raised" and ours[1] is theirs[1] is RecursionError


def test_other_frames_are_pamqps():
    body = marshal(ContentBody(b"\x00\xff body"), 1)
    assert same(unmarshal(body)[2], pamqp_unmarshal(body)[2])
    ack = marshal(spec.Basic.Ack(5, True), 1)
    assert dict(unmarshal(ack)[2]) == dict(pamqp_unmarshal(ack)[2]) == {"delivery_tag": 5, "multiple": True}
