"""Issue 47: an admin uploads a schema from the Settings menu's Body schemas page (a file, as
protoc or an .avsc wrote it); it is listed with what it declares, audited, and the letters it
reads are shown read; a file that is not a schema is refused saying why; only admins reach it. A
mapping that only groups (a body field, the format as the letters say) is added from the page and
splits the failure groups page's groups."""

from __future__ import annotations

import io
import json

import fastavro
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from fastavro.schema import parse_schema

from console.models import AuditEvent, BodySchema
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db(transaction=True)  # letters are read again after the upload's commit

SCHEMA = {"type": "record", "name": "Shipment", "namespace": "depot", "fields": [{"name": "parcel", "type": "string"}]}


def _upload(client, content: bytes, **fields):
    return client.post(reverse("body-schemas"), {
        "kind": "avro", "name": "shipment.avsc", "registry_id": "12", "reason": "the depot's bodies",
        "file": SimpleUploadedFile("shipment.avsc", content), **fields})


@pytest.mark.role("admin")
def test_an_admin_uploads_a_schema_from_the_page(signed_in, memory_broker):
    out = io.BytesIO()
    fastavro.schemaless_writer(out, parse_schema(SCHEMA), {"parcel": "PX-77"})
    letter = store_letter(memory_place(memory_broker), b"\x00\x00\x00\x00\x0c" + out.getvalue())
    assert "Settings" in signed_in.get(reverse("inventory")).content.decode()
    assert 'href="/body-schemas/"' in signed_in.get(reverse("inventory")).content.decode()

    answer = _upload(signed_in, json.dumps(SCHEMA).encode())
    assert answer.status_code == 302, answer.content.decode()[-2000:]
    page = signed_in.get(reverse("body-schemas")).content.decode()
    assert "shipment.avsc" in page and "depot.Shipment" in page
    assert AuditEvent.objects.filter(action="body_schema.uploaded", reason="the depot's bodies").exists()
    assert "PX-77" in signed_in.get(reverse("letter", args=[letter.pk])).content.decode()
    assert signed_in.get(f"/api/letters/{letter.pk}/").json()["decoded"]["value"] == {"parcel": "PX-77"}

    refused = _upload(signed_in, b"{not json", name="broken.avsc", registry_id="")
    assert refused.status_code == 400 and "not an Avro schema" in refused.content.decode()

    schema = BodySchema.objects.get(name="shipment.avsc")
    assert signed_in.post(reverse("body-schema-delete", args=[schema.pk])).status_code == 302
    assert not BodySchema.objects.exists()
    assert signed_in.get(f"/api/letters/{letter.pk}/").json()["decoded"] is None


@pytest.mark.role("admin")
def test_an_admin_splits_groups_by_a_body_field_from_the_page(signed_in, memory_broker):
    place = memory_place(memory_broker)
    for provider in ("stripe", "adyen"):
        store_letter(place, json.dumps({"provider": provider}).encode(), exception_type="PaymentDeclined")
    page = signed_in.get(reverse("body-schemas")).content.decode()
    assert "<title>Body schemas · DLO</title>" in page and "Groups by" in page

    answer = signed_in.post(reverse("body-schemas"), {"mapping": "1", "place": place.pk, "format": "",
                                                      "group_path": "$.provider", "reason": "per provider"})
    assert answer.status_code == 302, answer.content.decode()[-2000:]
    assert "<code>$.provider</code>" in signed_in.get(reverse("body-schemas")).content.decode()
    groups = signed_in.get(reverse("groups")).content.decode()
    assert "$.provider = &quot;stripe&quot;" in groups and "$.provider = &quot;adyen&quot;" in groups


def test_an_operator_does_not_reach_it(signed_in):
    assert signed_in.get(reverse("body-schemas")).status_code == 403
    assert _upload(signed_in, json.dumps(SCHEMA).encode()).status_code == 403
    assert not BodySchema.objects.exists()
