"""What an admin uploads so that bodies written with a schema can be read (console.models.
BodySchema; console.decoders reads with them): Protobuf descriptor sets and Avro schemas.
Checked by their format before they are kept (a descriptor set that does not parse, or whose
files do not build, is refused saying why), bounded in size, audited; the formats are handed
them here (:func:`connect`, console.decoders.schemas)."""

from __future__ import annotations

import hashlib

from django.db import connection, transaction
from django.db.models import Q, QuerySet

from console import json_path
from console.access.actors import Actor
from console.access.scope import scope_of
from console.decoders import KINDS, schemas
from console.models import BodyMapping, BodySchema, DeadLetter, DeadPlace
from console.refusals import Forbidden, Refusal
from console.services import audit, group_keys
from console.services.mapped_letters import named_by
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
    _every_place(actor)
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
    _every_place(actor)
    transaction.on_commit(read_again)
    audit.record("body_schema.deleted", actor=actor, reason=reason, target=f"{schema.kind}: {schema.name}",
                 details={"schema": schema.pk, "sha256": schema.sha256})
    schema.delete()


@transaction.atomic
def do_create_mapping(*, actor: Actor, format: str = "", message_type: str = "", place: DeadPlace | None = None,
                      origin: str = "", header: str = "", header_value: str = "", group_path: str = "",
                      reason: str = "") -> BodyMapping:
    """Say which format (and message type) the bodies of a place, an origin or a header value
    are in, and/or by which of their fields their failure groups split (``group_path``,
    console.services.group_keys). An admin limited to some places maps only those, and a
    mapping names a place or an origin they may see."""
    origin, header, header_value, message_type, group_path = (
        origin.strip(), header.strip(), header_value.strip(), message_type.strip(), group_path.strip())
    if format and format not in KINDS:
        raise SchemaError(f"unknown format {format!r}; formats: {', '.join(KINDS)}")
    if not format and not group_path:
        raise SchemaError("a mapping names a format, a group path, or both")
    if message_type and not format:
        raise SchemaError("a message type needs its format")
    if group_path:
        try:
            steps = json_path.steps(group_path)
        except json_path.PathError as exc:
            raise SchemaError(f"the group path {exc}") from None
        if any(kind == json_path.DESCEND or key == json_path.WILDCARD for kind, key in steps):
            raise SchemaError("the group path names one value: no .. nor *")
    if place is None and not origin and not header:
        raise SchemaError("a mapping names a place, an origin or a header (with its value)")
    if header_value and not header:
        raise SchemaError("a header value needs the header's name")
    for text, most in ((origin, 500), (header, 200), (header_value, 500), (message_type, 500), (group_path, 500)):
        if len(text) > most:
            raise SchemaError(f"{text[:40]}… is longer than {most} characters")
    scope = scope_of(actor)
    if not scope.unlimited and (place is None or place.pk not in scope.place_ids):
        raise Forbidden("a mapping by someone limited to some places names one of their places")
    mapping = BodyMapping.objects.create(place=place, origin=origin, header=header, header_value=header_value,
                                         format=format, message_type=message_type, group_path=group_path,
                                         created_by=audit.actor_name(actor))
    transaction.on_commit(read_again)
    audit.record("body_mapping.created", actor=actor, reason=reason, target=str(mapping), place=place,
                 details={"mapping": mapping.pk, "format": format, "message_type": message_type,
                          "origin": origin, "header": header, "header_value": header_value,
                          "group_path": group_path})
    return mapping


@transaction.atomic
def do_delete_mapping(mapping: BodyMapping, *, actor: Actor, reason: str = "") -> None:
    scope = scope_of(actor)
    if not scope.unlimited and (mapping.place_id is None or mapping.place_id not in scope.place_ids):
        raise Forbidden("this mapping is not limited to your places")
    named = named_by(_as_mapping(mapping))  # their groups are their envelopes' again
    transaction.on_commit(lambda: read_again(named))
    audit.record("body_mapping.deleted", actor=actor, reason=reason, target=str(mapping), place=mapping.place,
                 details={"mapping": mapping.pk, "format": mapping.format, "message_type": mapping.message_type,
                          "group_path": mapping.group_path})
    mapping.delete()


def _every_place(actor: Actor) -> None:
    """A schema is read in every place: an admin limited to some places may not change them."""
    if not scope_of(actor).unlimited:
        raise Forbidden("a schema is read in every place: only an admin of every place uploads or deletes one "
                        "(map your places to the uploaded ones)")


def changeable_schemas(actor: Actor) -> QuerySet[BodySchema]:
    """The schemas ``actor`` may delete: every one for an admin of every place, none for one
    limited to some (to them the others' schemas are not there to change)."""
    return BodySchema.objects.all() if scope_of(actor).unlimited else BodySchema.objects.none()


def visible_mappings(actor: Actor) -> QuerySet[BodyMapping]:
    """The mappings ``actor`` may see: those of their places (someone limited to some), or all."""
    scope = scope_of(actor)
    mappings = BodyMapping.objects.all()
    return mappings if scope.unlimited else mappings.filter(place_id__in=scope.place_ids)


def read_again(unmapped: Q | None = None) -> int:
    """The search rows and rules' documents of the letters read in Python written again, with
    the schemas as they are now: letters captured before their schema was uploaded are found by
    its fields, and matched by body paths, from now on; then their failure groups, and those of
    the letters a deleted mapping named (``unmapped``), as the mappings split them now. How many
    search rows were written."""
    written = write_texts_again()
    group_keys.regroup(DeadLetter.objects.all(), also=unmapped)
    return written


def _uploads(kind: str) -> list[schemas.Upload]:
    """The uploads of a kind, oldest first."""
    return [schemas.Upload(name, bytes(data), registry_id) for name, data, registry_id in
            BodySchema.objects.filter(kind=kind).order_by("id").values_list("name", "data", "registry_id")]


def _uploads_key() -> str:
    """A key that changes when any upload or mapping does (one small query)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT (SELECT count(*) || ':' || coalesce(max(uploaded_at)::text, '') || ':' "
                       "|| coalesce(max(id), 0) FROM console_bodyschema), "
                       "(SELECT count(*) || ':' || coalesce(max(id), 0) FROM console_bodymapping)")
        schemas_key, mappings_key = cursor.fetchone()
    return f"{schemas_key}/{mappings_key}"


def _mappings() -> list[schemas.Mapping]:
    return [_as_mapping(mapping) for mapping in BodyMapping.objects.order_by("id")]


def _as_mapping(mapping: BodyMapping) -> schemas.Mapping:
    return schemas.Mapping(mapping.format, mapping.message_type, mapping.place_id, mapping.origin, mapping.header,
                           mapping.header_value, mapping.group_path)


def connect() -> None:
    """Hand the formats the uploads (console.apps, once Django is ready)."""
    schemas.uploads, schemas.mappings, schemas.uploads_key = _uploads, _mappings, _uploads_key
