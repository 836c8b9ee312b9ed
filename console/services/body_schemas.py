"""What an admin uploads so that bodies written with a schema can be read (console.models.
BodySchema; console.decoders reads with them): Protobuf descriptor sets and Avro schemas.
Checked by their format before they are kept (a descriptor set that does not parse, or whose
files do not build, is refused saying why), bounded in size, audited; the formats are handed
them here (:func:`connect`, console.decoders.schemas)."""

from __future__ import annotations

import hashlib

from django.db import transaction
from django.db.models import Count, Max

from console.access.actors import Actor
from console.decoders import KINDS, schemas
from console.models import BodySchema
from console.refusals import Refusal
from console.services import audit
from console.services.search_rows import write_texts_again

#: An uploaded file may be at most this large.
MAX_BYTES = 2 * 1024 * 1024


class SchemaError(Refusal):
    """An upload the console refuses, saying why."""


@transaction.atomic
def do_upload_schema(*, actor: Actor, kind: str, name: str, data: bytes, reason: str = "",
                     registry_id: int | None = None) -> BodySchema:
    """Keep an uploaded schema file under ``name`` (a new one, or in place of the one of that
    name); ``registry_id``: the schema registry's id an Avro schema has."""
    if kind not in BodySchema.Kind.values:
        raise SchemaError(f"unknown kind {kind!r}; kinds: {', '.join(BodySchema.Kind.values)}")
    name = name.strip()
    if not name or len(name) > 200:
        raise SchemaError("a schema needs a name of at most 200 characters")
    if not data or len(data) > MAX_BYTES:
        raise SchemaError(f"a schema file must hold 1 byte to {MAX_BYTES // (1024 * 1024)} MiB")
    if registry_id is not None and kind != BodySchema.Kind.AVRO:
        raise SchemaError("only an Avro schema has a schema registry id")
    if registry_id is not None and BodySchema.objects.filter(kind=kind, registry_id=registry_id).exclude(
            name=name).exists():
        raise SchemaError(f"another {kind} schema has the registry id {registry_id}")
    try:
        declares = KINDS.get(kind).declares(data)
    except Refusal as exc:
        raise SchemaError(str(exc)) from None
    schema = BodySchema.objects.filter(name=name).first() or BodySchema(name=name)
    before = schema.sha256 or None
    schema.kind, schema.data, schema.declares, schema.registry_id = kind, data, declares, registry_id
    schema.sha256, schema.uploaded_by = hashlib.sha256(data).hexdigest(), audit.actor_name(actor)
    schema.save()
    transaction.on_commit(read_again)
    audit.record("body_schema.uploaded", actor=actor, reason=reason, target=f"{kind}: {name}",
                 details={"schema": schema.pk, "sha256": schema.sha256, "before_sha256": before,
                          "declares": declares[:200], "registry_id": registry_id})
    return schema


@transaction.atomic
def do_delete_schema(schema: BodySchema, *, actor: Actor, reason: str = "") -> None:
    transaction.on_commit(read_again)
    audit.record("body_schema.deleted", actor=actor, reason=reason, target=f"{schema.kind}: {schema.name}",
                 details={"schema": schema.pk, "sha256": schema.sha256})
    schema.delete()


def read_again() -> int:
    """The search rows and rules' documents of the letters read in Python written again, with
    the schemas as they are now: letters captured before their schema was uploaded are found by
    its fields, and matched by body paths, from now on. How many were written."""
    return write_texts_again()


def _uploads(kind: str) -> list[schemas.Upload]:
    """The uploads of a kind, oldest first."""
    return [schemas.Upload(name, bytes(data), registry_id) for name, data, registry_id in
            BodySchema.objects.filter(kind=kind).order_by("id").values_list("name", "data", "registry_id")]


def _uploads_key() -> str:
    """A key that changes when any upload does (one small query)."""
    facts = BodySchema.objects.aggregate(count=Count("id"), last=Max("uploaded_at"), top=Max("id"))
    return f"{facts['count']}:{facts['last']}:{facts['top']}"


def connect() -> None:
    """Hand the formats the uploads (console.apps, once Django is ready)."""
    schemas.uploads, schemas.uploads_key = _uploads, _uploads_key
