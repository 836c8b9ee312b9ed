"""The serializer classes the API's OpenAPI schema names, found by walking what drf-spectacular
builds from the URLconf (nested ones included): what the API answers with, or what it reads."""

from __future__ import annotations

from unittest import mock

from drf_spectacular.generators import SchemaGenerator
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import force_instance
from rest_framework import serializers


def serializers_in_schema(direction: str) -> set[type]:
    """Serializer classes the schema resolves for ``direction``: "response" or "request"."""
    seen: set[type] = set()
    resolve = AutoSchema.resolve_serializer

    def recording(self, serializer, wanted, bypass_extensions=False):
        if wanted == direction:
            instance = force_instance(serializer)
            seen.add(type(instance.child if isinstance(instance, serializers.ListSerializer) else instance))
        return resolve(self, serializer, wanted, bypass_extensions)

    with mock.patch.object(AutoSchema, "resolve_serializer", recording):
        SchemaGenerator().get_schema(request=None, public=True)
    return seen
