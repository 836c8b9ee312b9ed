"""What an admin sets so that the console can read bodies written with a schema
(console.decoders): uploaded Protobuf descriptor sets and Avro schemas, and mappings that say
which format and message type the bodies of a place, an origin or a header value are in.
Changed through console.services.body_schemas, audited."""

from __future__ import annotations

from django.db import models


class BodySchema(models.Model):
    """One uploaded file: ``data`` as uploaded (a serialized FileDescriptorSet for Protobuf, an
    ``.avsc`` for Avro)."""

    class Kind(models.TextChoices):
        PROTOBUF = "protobuf", "Protobuf descriptor set (protoc --descriptor_set_out, buf build -o)"
        AVRO = "avro", "Avro schema (.avsc)"

    kind = models.CharField(max_length=20, choices=Kind.choices)
    name = models.CharField(max_length=200, unique=True, help_text="What people call it (e.g. orders.proto v3)")
    data = models.BinaryField()
    sha256 = models.CharField(max_length=64)
    #: What it declares, for the page and the API (Protobuf: its message types).
    declares = models.JSONField(default=list)
    #: Avro: the schema registry's id of the schema (Confluent's wire format names it so).
    registry_id = models.PositiveIntegerField(null=True, blank=True)
    uploaded_by = models.CharField(max_length=150)
    uploaded_at = models.DateTimeField(auto_now=True, help_text="When it was last uploaded")

    class Meta:
        ordering = ["kind", "name"]

    def __str__(self) -> str:
        return f"{self.get_kind_display().split(' (')[0]} {self.name}"


class BodyMapping(models.Model):
    """The letters of a place, of an origin, or carrying a header value (those that are set, all
    of them) have bodies in ``format`` (a name of console.decoders.KINDS), of ``message_type``
    (a Protobuf message type, an Avro schema's full name) where the format needs one. What a
    letter says itself (its content type, a message-type header) comes first. ``format`` is
    blank for a mapping that only groups.

    ``group_path``: a JSON path into their bodies as read (console.json_path, one place); the
    value there is part of their failure groups' key (console.services.group_keys), so the
    same exception splits by, say, ``$.provider``."""

    place = models.ForeignKey("console.DeadPlace", null=True, blank=True, on_delete=models.CASCADE,
                              related_name="+")
    origin = models.CharField(max_length=500, blank=True, help_text="The origin queue, as letters name it")
    header = models.CharField(max_length=200, blank=True, help_text="A header's name")
    header_value = models.CharField(max_length=500, blank=True, help_text="Its value")
    format = models.CharField(max_length=40, blank=True)
    message_type = models.CharField(max_length=500, blank=True)
    group_path = models.CharField(max_length=500, blank=True, help_text="Failure groups split by this body field")
    created_by = models.CharField(max_length=150)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        where = [f"place {self.place_id}" if self.place_id else "", f"origin {self.origin}" if self.origin else "",
                 f"{self.header}={self.header_value}" if self.header else ""]
        read = f"{self.format} {self.message_type}".strip()
        grouped = f"groups by {self.group_path}" if self.group_path else ""
        return f"{' and '.join(part for part in where if part)} -> {', '.join(p for p in (read, grouped) if p)}"
