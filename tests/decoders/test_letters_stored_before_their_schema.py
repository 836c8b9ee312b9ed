"""Issue 47: letters stored before their schema was uploaded. An Avro letter in Confluent's wire
format whose registry id no upload names yet is shown as stored; once the schema is uploaded with
that id, its record is shown, ``q`` finds a field's value, and a rule's body path matches it (the
upload reads such letters again). Deleting the schema puts them back as stored."""

from __future__ import annotations

import io
import json

import fastavro
import pytest
from fastavro.schema import parse_schema

from console.models import Rule
from console.services.body_schemas import do_delete_schema, do_upload_schema
from console.services.rules.deciding import dry_run
from console.services.search_rows import fill_search_rows
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db(transaction=True)  # the upload reads the letters after its commit

SCHEMA = {"type": "record", "name": "Reading", "namespace": "plant",
          "fields": [{"name": "sensor", "type": "string"}, {"name": "kelvin", "type": "int"}]}


def _confluent(registry_id: int, **record) -> bytes:
    out = io.BytesIO()
    fastavro.schemaless_writer(out, parse_schema(SCHEMA), record)
    return b"\x00" + registry_id.to_bytes(4, "big") + out.getvalue()


def test_an_upload_reads_the_letters_stored_before_it(memory_broker, signed_in, admin):
    letter = store_letter(memory_place(memory_broker), _confluent(77, sensor="boiler-3", kelvin=451))
    fill_search_rows()
    assert signed_in.get(f"/api/letters/{letter.pk}/").json()["decoded"] is None  # no format says it yet
    rule = Rule.objects.create(name="hot boilers", match={"body_path": {"path": "$.kelvin", "value": 451}},
                               action={"kind": "hold"})
    assert dry_run(rule, reader=admin).matched == 0

    schema = do_upload_schema(actor=admin, kind="avro", name="reading.avsc", data=json.dumps(SCHEMA).encode(),
                              registry_id=77)
    assert signed_in.get(f"/api/letters/{letter.pk}/").json()["decoded"]["value"] == {"sensor": "boiler-3",
                                                                                      "kelvin": 451}
    assert [row["id"] for row in signed_in.get("/api/letters/", {"q": "boiler-3"}).json()["results"]] == [letter.pk]
    assert dry_run(rule, reader=admin).matched == 1

    do_delete_schema(schema, actor=admin)
    assert signed_in.get(f"/api/letters/{letter.pk}/").json()["decoded"] is None
    assert dry_run(rule, reader=admin).matched == 0
