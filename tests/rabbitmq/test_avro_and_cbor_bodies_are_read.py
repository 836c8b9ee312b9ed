"""Issue 47 against the real RabbitMQ, with producers built on each format's own library: Avro
written by fastavro in Confluent's wire format (a schema registry id) and as a single-object
encoding (the schema's fingerprint), an Avro object container file, and CBOR written by cbor2.
Once an admin uploads the schema with its registry id, the letters' pages and the API show the
records; ``q`` finds a field's value. An edit of an Avro record's decoded value reaches the origin
framed as it was, read back by fastavro; an edit that does not fit the schema answers 400
naming the field."""

from __future__ import annotations

import base64
import io
import json

import cbor2
import fastavro
import pytest
from django.urls import reverse
from fastavro.schema import fingerprint, parse_schema, to_parsing_canonical_form
from rest_framework.test import APIClient

from console.jobs.door.runner import run_job
from console.services.search_rows import fill_search_rows

pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db]

SCHEMA = {"type": "record", "name": "Payment", "namespace": "billing", "fields": [
    {"name": "id", "type": "string"},
    {"name": "cents", "type": "long"},
    {"name": "at", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "note", "type": ["null", "string"], "default": None}]}
REGISTRY_ID = 4711
PARSED = parse_schema(SCHEMA)


def _datum(**fields) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, PARSED, {"at": 1_767_225_600_000, "note": None, **fields})
    return out.getvalue()


def confluent(**fields) -> bytes:
    return b"\x00" + REGISTRY_ID.to_bytes(4, "big") + _datum(**fields)


def single_object(**fields) -> bytes:
    return b"\xc3\x01" + bytes.fromhex(fingerprint(to_parsing_canonical_form(PARSED), "CRC-64-AVRO")) + _datum(**fields)


def container(*records: dict) -> bytes:
    out = io.BytesIO()
    fastavro.writer(out, PARSED, [{"at": 0, "note": None, **record} for record in records], codec="deflate")
    return out.getvalue()


@pytest.fixture
def uploaded(admin):
    api = APIClient()
    api.force_authenticate(admin)
    answer = api.post("/api/body-schemas/", {
        "kind": "avro", "name": "payment.avsc", "registry_id": REGISTRY_ID, "reason": "billing's bodies",
        "base64": base64.b64encode(json.dumps(SCHEMA).encode()).decode()}, format="json")
    assert answer.status_code == 201, answer.content
    assert (answer.json()["declares"], answer.json()["registry_id"]) == (["billing.Payment"], REGISTRY_ID)


def test_avro_and_cbor_letters_are_shown_and_found(uploaded, captured, signed_in):
    avro = {"content_type": "application/vnd.confluent.avro"}
    _, _, (wired, single, boxed, tagged) = captured("payments", [
        (confluent(id="PAY-1", cents=1250), {}, avro),
        (single_object(id="PAY-2", cents=99, note="second try"), {}),  # its first bytes say it
        (container({"id": "PAY-3", "cents": 1}, {"id": "PAY-4", "cents": 2}), {}),
        (cbor2.dumps({"device": "thermo-7", "celsius": 21.5, "raw": b"\x01\x02"}), {},
         {"content_type": "application/cbor"})])
    fill_search_rows()

    def decoded(letter):
        return signed_in.get(f"/api/letters/{letter.pk}/").json()["decoded"]

    assert decoded(wired)["value"] == {"id": "PAY-1", "cents": 1250, "at": "2026-01-01 00:00:00+00:00", "note": None}
    assert decoded(single)["value"]["note"] == "second try"
    assert [record["id"] for record in decoded(boxed)["value"]["records"]] == ["PAY-3", "PAY-4"]
    assert decoded(tagged) == {"format": "cbor", "format_label": "CBOR", "unsafe": False, "error": "",
                               "value": {"device": "thermo-7", "celsius": 21.5, "raw": {"$bytes": "AQI="}}}
    page = signed_in.get(reverse("letter", args=[wired.pk])).content.decode()
    assert "Stored as Avro; shown read, as JSON." in page and "PAY-1" in page
    for value, letter in (("PAY-1", wired), ("second try", single), ("PAY-4", boxed), ("thermo-7", tagged)):
        assert [row["id"] for row in signed_in.get("/api/letters/", {"q": value}).json()["results"]] == [letter.pk]


def test_an_avro_edit_reaches_the_origin_framed_as_it_was(uploaded, captured, signed_in, kit):
    work, _, (letter,) = captured("payments", [(confluent(id="PAY-1", cents=1250), {})])
    value = signed_in.get(f"/api/letters/{letter.pk}/").json()["decoded"]["value"]

    without_id = {key: item for key, item in value.items() if key != "id"}
    for misfit, field in (({**value, "cents": "a lot"}, "cents"), (without_id, "id")):
        refused = signed_in.post(f"/api/letters/{letter.pk}/edit-replay/", {"decoded": misfit, "reason": "fix"},
                                 content_type="application/json")
        assert refused.status_code == 400 and field in refused.json()["detail"], refused.content

    answer = signed_in.post(f"/api/letters/{letter.pk}/edit-replay/",
                            {"decoded": {**value, "cents": 1300, "note": "corrected"}, "reason": "the fee was missing"},
                            content_type="application/json")
    assert answer.status_code == 202, answer.content
    assert run_job(answer.json()["id"]) == "succeeded"
    (sent,) = kit.drain(work)
    assert sent.body[:5] == b"\x00" + REGISTRY_ID.to_bytes(4, "big")
    record = fastavro.schemaless_reader(io.BytesIO(sent.body[5:]), PARSED)
    assert (record["id"], record["cents"], record["note"], record["at"].year) == ("PAY-1", 1300, "corrected", 2026)
