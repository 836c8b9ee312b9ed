"""Issue 47: bodies in the formats their teams write, read with each format's own library
(msgpack, cbor2, pickletools, defusedxml) and shown on the letter's page and in the API; hostile
bodies of each format answer the page (no 500), say why they do not read, and run nothing: a
pickle whose __reduce__ would write a file is shown disassembled, naming what it would load."""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import cbor2
import msgpack
import pytest
from django.urls import reverse

from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


class WritesAFile:
    """What an attacker pickles: loading it would run os.system."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):
        return (os.system, (f"touch {self.path}",))


def _page(client, letter) -> str:
    response = client.get(reverse("letter", args=[letter.pk]))
    assert response.status_code == 200
    return response.content.decode()


def _decoded(client, letter) -> dict:
    answer = client.get(f"/api/letters/{letter.pk}/")
    assert answer.status_code == 200
    return answer.json()["decoded"]


@pytest.fixture
def place(memory_broker):
    return memory_place(memory_broker)


def test_a_celery_msgpack_task_shows_its_args(signed_in, place):
    body = msgpack.packb([[42, "EUR"], {"retry": True}, {"callbacks": None, "chord": None}])
    letter = store_letter(place, body, properties={"content_type": "application/x-msgpack",
                                                   "content_encoding": "binary"}, headers={"task": "shop.charge"})
    assert "Stored as MessagePack; shown read, as JSON." in _page(signed_in, letter)
    assert _decoded(signed_in, letter)["value"] == [[42, "EUR"], {"retry": True}, {"callbacks": None, "chord": None}]


def test_cbor_is_read(signed_in, place):
    letter = store_letter(place, cbor2.dumps({"device": "sensor-7", "reading": 21.5, "raw": b"\x01\x02"}),
                          properties={"content_type": "application/cbor"})
    assert _decoded(signed_in, letter)["value"] == {"device": "sensor-7", "reading": 21.5, "raw": {"$bytes": "AQI="}}
    assert "sensor-7" in _page(signed_in, letter)


def test_a_pickle_is_shown_disassembled_and_never_loaded(signed_in, place, tmp_path):
    target = tmp_path / "pwned"
    letter = store_letter(place, pickle.dumps(WritesAFile(target)),
                          properties={"content_type": "application/x-python-serialize"})
    page = _page(signed_in, letter)
    decoded = _decoded(signed_in, letter)
    assert decoded["unsafe"] is True and decoded["value"]["would_load"] == ["posix.system"]
    assert any("STACK_GLOBAL" in line for line in decoded["value"]["disassembly"])
    assert "never loaded here (loading it would run code)" in page and "posix.system" in page
    assert not target.exists()


def test_xml_is_laid_out_and_its_entities_are_refused(signed_in, place):
    letter = store_letter(place, b'<?xml version="1.0"?><order><id>7</id></order>',
                          properties={"content_type": "application/xml"})
    assert _decoded(signed_in, letter)["value"].splitlines() == ["<order>", "  <id>7</id>", "</order>"]
    laughs = b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>' \
             b"<lolz>&lol2;</lolz>"
    bomb = store_letter(place, laughs, properties={"content_type": "application/xml"})
    assert _decoded(signed_in, bomb) == {"format": "xml", "format_label": "XML", "value": None,
                                         "error": "refused: DTDForbidden", "unsafe": False}
    assert "Said to be XML, but it does not read (refused: DTDForbidden): shown as stored." in _page(signed_in, bomb)


HOSTILE = {
    "msgpack deep nesting": (b"\x91" * 200_000, "application/x-msgpack"),
    "msgpack huge declared array": (b"\xdd\xff\xff\xff\xff", "application/x-msgpack"),
    "msgpack huge declared string": (b"\xdb\xff\xff\xff\xff" + b"x" * 10, "application/x-msgpack"),
    "cbor deep nesting": (b"\x81" * 200_000 + b"\x00", "application/cbor"),
    "cbor huge declared array": (b"\x9b\xff\xff\xff\xff\xff\xff\xff\xff", "application/cbor"),
    "cbor huge declared bytes": (b"\x5b\x00\x00\x00\x10\x00\x00\x00\x00", "application/cbor"),
    "truncated pickle": (pickle.dumps({"a": 1})[:-3], "application/x-python-serialize"),
    "xml deep nesting": (b"<a>" * 50_000 + b"</a>" * 50_000, "application/xml"),
    "xml external entity": (b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>',
                            "application/xml"),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_body_says_why_and_the_page_answers(signed_in, place, name):
    body, content_type = HOSTILE[name]
    letter = store_letter(place, body, properties={"content_type": content_type})
    decoded = _decoded(signed_in, letter)
    assert decoded["value"] is None and decoded["error"], decoded
    assert "but it does not read" in _page(signed_in, letter)
    assert "root:" not in str(decoded)


def _varint(number: int) -> bytes:
    out = b""
    while number > 0x7F:
        out, number = out + bytes([number & 0x7F | 0x80]), number >> 7
    return out + bytes([number])


def _nested_protobuf(levels: int) -> bytes:
    """A Node whose child (field 1) is a Node, ``levels`` deep."""
    inner = b""
    for _ in range(levels):
        inner = b"\x0a" + _varint(len(inner)) + inner
    return inner


def _container_with_a_deep_schema(levels: int) -> bytes:
    """An Avro object container file carrying its own schema, arrays nested ``levels`` deep."""
    schema = ('{"type":"array","items":' * levels + '"int"' + "}" * levels).encode()
    meta = b"\x02" + b"\x16avro.schema" + _varint(len(schema) * 2) + schema + b"\x00"
    return b"Obj\x01" + meta + b"\x00" * 16


AVRO = "application/vnd.confluent.avro"
PROTOBUF = "application/x-protobuf; messageType=hostile.Node"
#: Bodies that need an uploaded schema: registry id 9 is a recursive record (a linked list),
#: 8 an array of strings; hostile.Node a recursive Protobuf message.
WITH_SCHEMAS = {
    "avro recursion a million deep": (b"\x00\x00\x00\x00\x09" + b"\x02" * 1_000_000 + b"\x00", AVRO),
    "avro huge declared array": (b"\x00\x00\x00\x00\x08" + _varint(2**62), AVRO),
    "avro huge declared string": (b"\x00\x00\x00\x00\x08\x02" + _varint(2**62) + b"x", AVRO),
    "avro unknown registry id": (b"\x00\x00\x00\x01\x00" + b"\x02", AVRO),
    "avro container with a schema nested 100,000 deep": (_container_with_a_deep_schema(100_000), AVRO),
    "protobuf recursion 5,000 deep": (_nested_protobuf(5_000), PROTOBUF),
    "protobuf huge declared length": (b"\x0a\xff\xff\xff\xff\x0f", PROTOBUF),
}


@pytest.fixture
def schemas(admin):
    import json

    from google.protobuf import descriptor_pb2

    from console.services.body_schemas import do_upload_schema

    linked = {"type": "record", "name": "Node", "fields": [{"name": "next", "type": ["null", "Node"]}]}
    do_upload_schema(actor=admin, kind="avro", name="node.avsc", data=json.dumps(linked).encode(), registry_id=9)
    do_upload_schema(actor=admin, kind="avro", name="tags.avsc",
                     data=json.dumps({"type": "array", "items": "string"}).encode(), registry_id=8)
    file = descriptor_pb2.FileDescriptorProto(name="hostile/node.proto", package="hostile", syntax="proto3")
    file.message_type.add(name="Node").field.add(
        name="child", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE, type_name=".hostile.Node",
        label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    do_upload_schema(actor=admin, kind="protobuf", name="node.proto",
                     data=descriptor_pb2.FileDescriptorSet(file=[file]).SerializeToString())


@pytest.mark.parametrize("name", WITH_SCHEMAS)
def test_a_hostile_body_read_with_its_schema_says_why_and_the_page_answers(signed_in, place, schemas, name):
    body, content_type = WITH_SCHEMAS[name]
    letter = store_letter(place, body, properties={"content_type": content_type})
    decoded = _decoded(signed_in, letter)
    assert decoded["value"] is None and decoded["error"], decoded
    assert "but it does not read" in _page(signed_in, letter)
