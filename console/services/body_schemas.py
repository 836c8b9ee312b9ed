"""What an admin uploads so that bodies written with a schema can be read (console.models.
BodySchema; console.decoders reads with them): Protobuf descriptor sets. Checked before they are
kept (a descriptor set that does not parse, or whose files do not build, is refused saying
why), bounded in size, audited; the Protobuf reader is handed them here (:func:`connect`)."""

from __future__ import annotations

import hashlib

from django.db import transaction
from django.db.models import Count, Max

from console.access.actors import Actor
from console.decoders import protobuf
from console.models import BodySchema
from console.refusals import Refusal
from console.services import audit

#: An uploaded file may be at most this large.
MAX_BYTES = 2 * 1024 * 1024


class SchemaError(Refusal):
    """An upload the console refuses, saying why."""


@transaction.atomic
def do_upload_schema(*, actor: Actor, kind: str, name: str, data: bytes, reason: str = "") -> BodySchema:
    """Keep an uploaded descriptor set under ``name`` (a new one, or in place of the one of that name)."""
    if kind not in BodySchema.Kind.values:
        raise SchemaError(f"unknown kind {kind!r}; kinds: {', '.join(BodySchema.Kind.values)}")
    name = name.strip()
    if not name or len(name) > 200:
        raise SchemaError("a schema needs a name of at most 200 characters")
    if not data or len(data) > MAX_BYTES:
        raise SchemaError(f"a schema file must hold 1 byte to {MAX_BYTES // (1024 * 1024)} MiB")
    try:
        declares = protobuf.declared(data)
    except protobuf.DescriptorSetError as exc:
        raise SchemaError(str(exc)) from None
    schema = BodySchema.objects.filter(name=name).first() or BodySchema(name=name)
    before = schema.sha256 or None
    schema.kind, schema.data, schema.declares = kind, data, declares
    schema.sha256, schema.uploaded_by = hashlib.sha256(data).hexdigest(), audit.actor_name(actor)
    schema.save()
    audit.record("body_schema.uploaded", actor=actor, reason=reason, target=f"{kind}: {name}",
                 details={"schema": schema.pk, "sha256": schema.sha256, "before_sha256": before,
                          "declares": declares[:200]})
    return schema


@transaction.atomic
def do_delete_schema(schema: BodySchema, *, actor: Actor, reason: str = "") -> None:
    audit.record("body_schema.deleted", actor=actor, reason=reason, target=f"{schema.kind}: {schema.name}",
                 details={"schema": schema.pk, "sha256": schema.sha256})
    schema.delete()


def _descriptor_sets() -> list[bytes]:
    """The uploaded Protobuf descriptor sets, oldest first."""
    schemas = BodySchema.objects.filter(kind=BodySchema.Kind.PROTOBUF).order_by("id")
    return [bytes(data) for data in schemas.values_list("data", flat=True)]


def _descriptor_sets_key() -> str:
    """A key that changes when the uploaded descriptor sets do (one small query)."""
    facts = BodySchema.objects.filter(kind=BodySchema.Kind.PROTOBUF).aggregate(
        count=Count("id"), last=Max("uploaded_at"), top=Max("id"))
    return f"{facts['count']}:{facts['last']}:{facts['top']}"


def connect() -> None:
    """Hand the Protobuf reader the uploads (console.apps, once Django is ready)."""
    protobuf.descriptor_sets, protobuf.descriptor_sets_key = _descriptor_sets, _descriptor_sets_key
