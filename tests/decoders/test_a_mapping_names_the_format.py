"""Issue 47: an admin's mapping says which format (and message type) the bodies of a place, an
origin or a header value are in, for letters that do not say it themselves: a Protobuf body with
no content type in a mapped place, a raw Avro datum (no framing) from a mapped origin, a CBOR body
carrying a mapped header value. Once mapped (through /api/body-mappings/, audited) they are shown
read and found by ``q``; deleting the mapping puts them back as stored. An admin limited to some
places maps only those, and changes no schema (each is read in every place); a viewer maps
nothing."""

from __future__ import annotations

import io
import json

import cbor2
import fastavro
import pytest
from fastavro.schema import parse_schema
from rest_framework.test import APIClient

from console.access.roles import ADMIN, VIEWER, set_role
from console.models import AuditEvent, BodyMapping, BodySchema, RoleScope
from console.services.body_schemas import do_upload_schema
from tests.web.factory import memory_place, store_letter, uploaded_schema

pytestmark = pytest.mark.django_db(transaction=True)  # mapped letters are read again after the commit

READING = {"type": "record", "name": "Reading", "namespace": "plant", "fields": [{"name": "sensor", "type": "string"}]}


def _protobuf_order(order_id: str) -> bytes:
    field = order_id.encode()
    return b"\x0a" + bytes([len(field)]) + field  # shop.Order { string id = 1; } (uploaded_schema)


def _raw_avro(sensor: str) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, parse_schema(READING), {"sensor": sensor})
    return out.getvalue()


def _client(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def letters(memory_broker):
    uploaded_schema()
    do_upload_schema(actor="tests", kind="avro", name="reading.avsc", data=json.dumps(READING).encode())
    place = memory_place(memory_broker)
    return {"protobuf": store_letter(place, _protobuf_order("ORD-55")),
            "avro": store_letter(place, _raw_avro("boiler-9"), origin="plant.readings"),
            "cbor": store_letter(place, cbor2.dumps({"device": "thermo-3"}), headers={"x-codec": "cbor"})}


def test_mapped_letters_are_read_found_and_put_back(letters, admin):
    api = _client(admin)
    for letter in letters.values():
        assert api.get(f"/api/letters/{letter.pk}/").json()["decoded"] is None

    mappings = [
        {"place": letters["protobuf"].place_id, "format": "protobuf", "message_type": "shop.Order"},
        {"origin": "plant.readings", "format": "avro", "message_type": "plant.Reading"},
        {"header": "x-codec", "header_value": "cbor", "format": "cbor"},
    ]
    made = [api.post("/api/body-mappings/", {**mapping, "reason": "they say nothing"}, format="json")
            for mapping in mappings]
    assert [answer.status_code for answer in made] == [201, 201, 201], [answer.content for answer in made]
    assert AuditEvent.objects.filter(action="body_mapping.created").count() == 3

    def value(name):
        return api.get(f"/api/letters/{letters[name].pk}/").json()["decoded"]["value"]

    assert value("avro") == {"sensor": "boiler-9"}
    assert value("cbor") == {"device": "thermo-3"}
    # The place's mapping names the Avro and CBOR letters too: the closest mapping decides
    # (their origin's, their header's).
    assert value("protobuf") == {"id": "ORD-55"}
    for needle, name in (("ORD-55", "protobuf"), ("boiler-9", "avro"), ("thermo-3", "cbor")):
        found = api.get("/api/letters/", {"q": needle}).json()["results"]
        assert [row["id"] for row in found] == [letters[name].pk], needle

    for mapping in BodyMapping.objects.all():
        assert api.delete(f"/api/body-mappings/{mapping.pk}/").status_code == 204
    assert api.get(f"/api/letters/{letters['avro'].pk}/").json()["decoded"] is None
    assert [row["id"] for row in api.get("/api/letters/", {"q": "boiler-9"}).json()["results"]] == [
        letters["avro"].pk]  # found in its stored bytes still, as any body


def test_an_admin_limited_to_a_place_maps_only_it_and_a_viewer_nothing(letters, memory_broker, django_user_model):
    other = memory_place(memory_broker, origin="invoices")
    limited = django_user_model.objects.create_user("lena", password="lena-pass-123")
    set_role(limited, ADMIN)
    RoleScope.objects.create(user=limited, place=other)
    api = _client(limited)
    assert api.post("/api/body-mappings/", {"place": letters["cbor"].place_id, "format": "cbor"},
                    format="json").status_code == 404  # a place they do not see
    assert api.post("/api/body-mappings/", {"origin": "plant.readings", "format": "avro"},
                    format="json").status_code == 403
    assert api.post("/api/body-mappings/", {"place": other.pk, "format": "cbor"}, format="json").status_code == 201
    # A schema is read in every place: theirs to map to, not to change.
    assert api.post("/api/body-schemas/", {"kind": "avro", "name": "reading.avsc", "base64": "e30="},
                    format="json").status_code == 403
    assert api.delete(f"/api/body-schemas/{BodySchema.objects.get(name='reading.avsc').pk}/").status_code == 404

    viewer = django_user_model.objects.create_user("vera", password="vera-pass-123")
    set_role(viewer, VIEWER)
    assert _client(viewer).post("/api/body-mappings/", {"place": other.pk, "format": "cbor"},
                                format="json").status_code == 403
    assert BodyMapping.objects.count() == 1
