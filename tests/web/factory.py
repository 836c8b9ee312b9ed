"""Letters in custody for the page tests, stored through the custody service."""

from __future__ import annotations

from console.brokers import Received
from console.letters.envelope import FailureEnvelope
from console.models import DeadLetter, DeadPlace
from console.services.brokers import do_discover
from console.services.custody import store_captured

XSS_SCRIPT = "<script>alert(1)</script>"
XSS_IMG = "<img src=x onerror=alert(1)>"


def memory_place(memory_broker, origin: str = "orders") -> DeadPlace:
    """The place ``<origin>.dlq`` on the in-memory broker, found by discovery."""
    fake, broker = memory_broker
    fake.queue(origin)
    fake.queue(f"{origin}.dlq")
    places = do_discover(broker, actor="tests")
    return next(p for p in places if p.name == f"{origin}.dlq")


def store_letter(
    place: DeadPlace,
    body: bytes = b"{}",
    *,
    headers: dict | None = None,
    properties: dict | None = None,
    origin: str = "orders",
    reason: str = "rejected",
    exception_type: str = "",
    exception_message: str = "",
    death_count: int = 1,
    details: dict | None = None,
    envelope: FailureEnvelope | None = None,
) -> DeadLetter:
    """Store one captured message and return its letter (``envelope`` overrides the fields)."""
    envelope = envelope or FailureEnvelope(
        origin_queue=origin, reason=reason, death_count=death_count,
        exception_type=exception_type, exception_message=exception_message, details=details or {},
    )
    message = Received(token=None, body=body, headers=headers or {}, properties=properties or {}, envelope=envelope)
    (letter_id,) = store_captured(place, [message], job=None, actor="tests").new
    return DeadLetter.objects.get(pk=letter_id)


def uploaded_schema(name: str = "orders.proto v1"):
    """A Protobuf descriptor set uploaded through the service (one file, one message ``shop.Order``
    with a string ``id``), as an admin would upload what protoc wrote."""
    from google.protobuf import descriptor_pb2

    from console.services.body_schemas import do_upload_schema

    file = descriptor_pb2.FileDescriptorProto(name="shop/order_id.proto", package="shop", syntax="proto3")
    file.message_type.add(name="Order").field.add(
        name="id", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
        label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL)
    return do_upload_schema(actor="tests", kind="protobuf", name=name,
                            data=descriptor_pb2.FileDescriptorSet(file=[file]).SerializeToString())


def uploaded_mapping():
    """A mapping through the service, as an admin would set it: letters carrying ``x-codec: cbor``
    have CBOR bodies."""
    from console.services.body_schemas import do_create_mapping

    return do_create_mapping(actor="tests", format="cbor", header="x-codec", header_value="cbor")
