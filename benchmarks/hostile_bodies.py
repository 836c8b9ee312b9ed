"""How long reading a hostile body takes, per format (console.decoders), against reading a
well-formed body of about the same size in the same format in the same run: deep nesting, huge
declared lengths, entity expansion, truncation, each at the 1 MiB the readers take at most.

    .venv/bin/python benchmarks/hostile_bodies.py [--repeat 5]

Prints, per body, the slowest of ``--repeat`` reads in milliseconds, what the reader said, and
the ratio to the well-formed baseline. No database, no Django: the readers are plain code, and
the schemas Avro and Protobuf read with are handed to them here as the console's uploads would be
(console.decoders.schemas).
"""

from __future__ import annotations

import argparse
import pickle
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import io  # noqa: E402
import json  # noqa: E402

import cbor2  # noqa: E402
import msgpack  # noqa: E402
from fastavro import schemaless_writer  # noqa: E402
from fastavro.schema import parse_schema  # noqa: E402
from google.protobuf import descriptor_pb2  # noqa: E402

from console.decoders import schemas  # noqa: E402
from console.decoders.base import MAX_BYTES  # noqa: E402
from console.decoders.reading import read  # noqa: E402

#: Avro: registry id 9 a recursive record (a linked list), 8 an array of strings, 7 orders.
#: Protobuf: hostile.Node, whose field 1 is a Node, and hostile.Orders, a list of strings.
LINKED = {"type": "record", "name": "Node", "fields": [{"name": "next", "type": ["null", "Node"]}]}
TAGS = {"type": "array", "items": "string"}
ORDERS = {"type": "array", "items": {"type": "record", "name": "Order",
                                     "fields": [{"name": "order", "type": "long"}, {"name": "sku", "type": "string"}]}}


def _descriptor_set() -> bytes:
    file = descriptor_pb2.FileDescriptorProto(name="hostile/node.proto", package="hostile", syntax="proto3")
    file.message_type.add(name="Node").field.add(
        name="child", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE, type_name=".hostile.Node",
        label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    file.message_type.add(name="Orders").field.add(
        name="sku", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
        label=descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED)
    return descriptor_pb2.FileDescriptorSet(file=[file]).SerializeToString()


UPLOADS = {"avro": [schemas.Upload("linked", json.dumps(LINKED).encode(), 9),
                    schemas.Upload("tags", json.dumps(TAGS).encode(), 8),
                    schemas.Upload("orders", json.dumps(ORDERS).encode(), 7)],
           "protobuf": [schemas.Upload("node", _descriptor_set())]}
schemas.uploads = lambda kind: UPLOADS.get(kind, [])
schemas.uploads_key = lambda: "benchmark"


def _varint(number: int) -> bytes:
    out = b""
    while number > 0x7F:
        out, number = out + bytes([number & 0x7F | 0x80]), number >> 7
    return out + bytes([number])


def _nested_protobuf(levels: int) -> bytes:
    inner = b""
    for _ in range(levels):
        inner = b"\x0a" + _varint(len(inner)) + inner
    return inner


def _avro_orders(count: int) -> bytes:
    out = io.BytesIO()
    schemaless_writer(out, parse_schema(ORDERS), [{"order": n, "sku": "gift-wrap"} for n in range(count)])
    return b"\x00\x00\x00\x00\x07" + out.getvalue()


AVRO = "application/vnd.confluent.avro"
PROTOBUF_NODE, PROTOBUF_ORDERS = "application/x-protobuf; messageType=hostile.Node", \
    "application/x-protobuf; messageType=hostile.Orders"

SIZE = MAX_BYTES - 64
WELL_FORMED = {
    "application/x-msgpack": msgpack.packb([{"order": n, "sku": "gift-wrap"} for n in range(SIZE // 28)]),
    "application/cbor": cbor2.dumps([{"order": n, "sku": "gift-wrap"} for n in range(SIZE // 28)]),
    "application/x-python-serialize": pickle.dumps([{"order": n, "sku": "gift-wrap"} for n in range(SIZE // 30)]),
    "application/xml": b"<orders>" + b"<o><n>1</n><sku>gift-wrap</sku></o>" * (SIZE // 40) + b"</orders>",
    AVRO: _avro_orders(SIZE // 13),
    PROTOBUF_NODE: b"".join(b"\x0a\x02\x0a\x00" for _ in range(SIZE // 4)),
    PROTOBUF_ORDERS: b"".join(b"\x0a\x09gift-wrap" for _ in range(SIZE // 11)),
}
HOSTILE = {
    "msgpack: deep nesting": (b"\x91" * SIZE, "application/x-msgpack"),
    "msgpack: declared 4G array": (b"\xdd\xff\xff\xff\xff", "application/x-msgpack"),
    "msgpack: declared 4G string": (b"\xdb\xff\xff\xff\xff" + b"x" * 10, "application/x-msgpack"),
    "cbor: deep nesting": (b"\x81" * SIZE + b"\x00", "application/cbor"),
    "cbor: declared 2^64 array": (b"\x9b\xff\xff\xff\xff\xff\xff\xff\xff", "application/cbor"),
    "cbor: declared 64G bytes": (b"\x5b\x00\x00\x00\x10\x00\x00\x00\x00", "application/cbor"),
    "cbor: indefinite map of maps": (b"\xbf" * SIZE, "application/cbor"),
    "pickle: truncated": (WELL_FORMED["application/x-python-serialize"][:-3], "application/x-python-serialize"),
    "pickle: a million opcodes": (b"\x80\x04" + b"N0" * (SIZE // 2) + b".", "application/x-python-serialize"),
    "xml: billion laughs": (b'<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaaaaaaaa">'
                            + b"".join(b'<!ENTITY a%d "%s">' % (n, b"&a;" * 10) for n in range(10))
                            + b"]><l>&a9;</l>", "application/xml"),
    "xml: deep nesting": (b"<a>" * (SIZE // 8) + b"</a>" * (SIZE // 8), "application/xml"),
    "xml: external entity": (b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
                             b"<x>&e;</x>", "application/xml"),
    "avro: recursion a million deep": (b"\x00\x00\x00\x00\x09" + b"\x02" * SIZE + b"\x00", AVRO),
    "avro: declared 2^62 array": (b"\x00\x00\x00\x00\x08" + _varint(2**62), AVRO),
    "avro: declared 2^62 string": (b"\x00\x00\x00\x00\x08\x02" + _varint(2**62) + b"x", AVRO),
    "avro: a million 1-item blocks": (b"\x00\x00\x00\x00\x08" + b"\x02\x00" * (SIZE // 2) + b"\x00", AVRO),
    "avro: container, schema 30k deep": (b"Obj\x01\x02\x16avro.schema" + _varint(2 * (30_000 * 25 + 5))
                                         + b'{"type":"array","items":' * 30_000 + b'"int"' + b"}" * 30_000
                                         + b"\x00" + b"\x00" * 16, AVRO),
    "protobuf: recursion 5,000 deep": (_nested_protobuf(5_000), PROTOBUF_NODE),
    "protobuf: declared 4G length": (b"\x0a\xff\xff\xff\xff\x0f", PROTOBUF_ORDERS),
}


def slowest(body: bytes, content_type: str, repeat: int) -> tuple[float, str]:
    said, times = "", []
    for _ in range(repeat):
        started = time.perf_counter()
        reading = read(body, {"content_type": content_type}, {})
        times.append(time.perf_counter() - started)
        said = "read" if reading is not None and reading.text is not None else (reading.error if reading else "-")
    return max(times) * 1000, said


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    baselines = {content_type: slowest(body, content_type, args.repeat)[0]
                 for content_type, body in WELL_FORMED.items()}
    print(f"{'body':32s} {'bytes':>9s} {'slowest ms':>11s} {'baseline ms':>12s} {'ratio':>6s}  said")
    for content_type, body in WELL_FORMED.items():
        print(f"{'well-formed ' + content_type.split('/')[1][:20]:32s} {len(body):9,d} "
              f"{baselines[content_type]:11.1f}")
    for name, (body, content_type) in HOSTILE.items():
        took, said = slowest(body, content_type, args.repeat)
        base = baselines[content_type]
        print(f"{name:32s} {len(body):9,d} {took:11.1f} {base:12.1f} {took / base:6.2f}  {said[:60]}")


if __name__ == "__main__":
    main()
