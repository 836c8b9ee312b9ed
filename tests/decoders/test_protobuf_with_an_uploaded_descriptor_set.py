"""Issue 47: Protobuf read with a descriptor set an admin uploaded. The set is what protoc
--include_imports --descriptor_set_out writes (a FileDescriptorSet, built here with the protobuf
library's own descriptor_pb2), and the messages are serialized by classes made from it. Once
uploaded (admin only, audited), a letter naming its type (a header, or the content type's
messageType) shows its fields; the body search finds a field's value; a JSON path masks a
field for a viewer on the page and in the API."""

from __future__ import annotations

import base64

import pytest
from django.urls import reverse
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from console.models import AuditEvent
from console.services.redaction import do_set_redaction_rule
from console.services.search_rows import fill_search_rows
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


def _descriptor_set() -> bytes:
    """shop/orders.proto: package shop; message Order { string id = 1; int64 cents = 2;
    Customer customer = 3; } message Customer { string email = 1; }"""
    file = descriptor_pb2.FileDescriptorProto(name="shop/orders.proto", package="shop", syntax="proto3")
    customer = file.message_type.add(name="Customer")
    customer.field.add(name="email", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
                       label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    order = file.message_type.add(name="Order")
    order.field.add(name="id", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
                    label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    order.field.add(name="cents", number=2, type=descriptor_pb2.FieldDescriptorProto.TYPE_INT64,
                    label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    order.field.add(name="customer", number=3, type=descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
                    type_name=".shop.Customer", label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    return descriptor_pb2.FileDescriptorSet(file=[file]).SerializeToString()


def _order(**fields) -> bytes:
    pool = descriptor_pool.DescriptorPool()
    for file in descriptor_pb2.FileDescriptorSet.FromString(_descriptor_set()).file:
        pool.Add(file)
    Order = message_factory.GetMessageClass(pool.FindMessageTypeByName("shop.Order"))  # noqa: N806
    return Order(**fields).SerializeToString()


@pytest.fixture
def letters(memory_broker):
    place = memory_place(memory_broker)
    by_header = store_letter(place, _order(id="A-1006", cents=4200, customer={"email": "eve@example.com"}),
                             properties={"content_type": "application/x-protobuf"},
                             headers={"proto-message-type": "shop.Order"})
    by_parameter = store_letter(place, _order(id="B-7", cents=1),
                                properties={"content_type": "application/x-protobuf; messageType=shop.Order"})
    fill_search_rows()
    return by_header, by_parameter


def _upload(client, data: bytes, name: str = "orders.proto v1"):
    return client.post("/api/body-schemas/", {"kind": "protobuf", "name": name, "reason": "orders' bodies",
                                              "base64": base64.b64encode(data).decode()},
                       content_type="application/json")


@pytest.mark.role("admin")
def test_after_the_upload_the_fields_are_shown_found_and_masked(signed_in, letters, client, people_viewer):
    by_header, by_parameter = letters
    before = signed_in.get(f"/api/letters/{by_header.pk}/").json()["decoded"]
    assert before["value"] is None and "no uploaded descriptor set has the message type shop.Order" in before["error"]

    uploaded = _upload(signed_in, _descriptor_set())
    assert uploaded.status_code == 201, uploaded.content
    assert uploaded.json()["declares"] == ["shop.Customer", "shop.Order"]
    assert AuditEvent.objects.filter(action="body_schema.uploaded", actor_name="olga").exists()

    decoded = signed_in.get(f"/api/letters/{by_header.pk}/").json()["decoded"]
    assert decoded["value"] == {"id": "A-1006", "cents": "4200", "customer": {"email": "eve@example.com"}}
    assert signed_in.get(f"/api/letters/{by_parameter.pk}/").json()["decoded"]["value"] == {"id": "B-7",
                                                                                            "cents": "1"}
    page = signed_in.get(reverse("letter", args=[by_header.pk])).content.decode()
    assert "Stored as Protobuf; shown read, as JSON." in page and "A-1006" in page

    fill_search_rows()
    found = signed_in.get("/api/letters/", {"q": "A-1006"}).json()["results"]
    assert [row["id"] for row in found] == [by_header.pk]

    do_set_redaction_rule(actor="tests", kind="json_path", pattern="$..email")
    client.force_login(people_viewer)
    page = client.get(reverse("letter", args=[by_header.pk])).content.decode()
    assert "A-1006" in page and "eve@example.com" not in page
    shown = client.get(f"/api/letters/{by_header.pk}/").json()["decoded"]
    assert shown["value"]["id"] == "A-1006" and "eve@example.com" not in str(shown)


@pytest.mark.role("admin")
def test_a_file_that_is_no_descriptor_set_is_refused_saying_why(signed_in):
    refused = _upload(signed_in, b"\xff\xff\xff not a descriptor set")
    assert refused.status_code == 400 and "not a Protobuf descriptor set" in refused.content.decode()


def test_only_an_admin_uploads(signed_in):  # olga, an operator here
    assert _upload(signed_in, _descriptor_set()).status_code == 403
    assert signed_in.get("/api/body-schemas/").status_code == 200


@pytest.fixture
def people_viewer(django_user_model):
    from console.access.roles import VIEWER, set_role

    user = django_user_model.objects.create_user("vera", password="vera-pass-123")
    set_role(user, VIEWER)
    return user
