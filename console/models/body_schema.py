"""What an admin uploads so that the console can read bodies written with a schema
(console.decoders): Protobuf descriptor sets, for now. Changed through
console.services.body_schemas, audited."""

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
