"""Masking by default in the API (issue 28, "what to build" 1): every serializer the API answers
with, found by walking the OpenAPI schema drf-spectacular builds from the URLconf (nested ones
included), derives from the masked base (console.access.masking), so each of its fields is masked
for the reader unless declared safe; a new serializer that does not fails here. What no
serializer makes (plain dicts, error bodies) is masked whole by the API's renderer."""

from __future__ import annotations

import pytest
from django.conf import settings
from drf_spectacular.plumbing import force_instance
from rest_framework import serializers

from console.access.masking import (
    MaskedSerializerMixin,
    MaskingJSONRenderer,
    is_safe_field,
)
from tests.schema_walk import serializers_in_schema


@pytest.fixture
def answered_with() -> set[type]:
    """The serializer classes the schema says the API answers with."""
    return serializers_in_schema("response")


def test_the_walk_finds_the_answers(answered_with):
    names = {cls.__name__ for cls in answered_with}
    assert {"RuleSerializer", "GroupDetailSerializer", "NoteSerializer", "LetterSerializer", "JobSerializer",
            "AuditEventSerializer", "ChannelSerializer", "ErrorSerializer", "StreakSerializer"} <= names


def test_every_serializer_the_api_answers_with_is_masked(answered_with):
    unmasked = sorted(f"{cls.__module__}.{cls.__qualname__}" for cls in answered_with
                      if not issubclass(cls, MaskedSerializerMixin))
    assert unmasked == []


def test_fields_declared_safe_by_name_exist(answered_with):
    """A name in ``safe_fields`` that is no field is a typo, or a field renamed past its declaration."""
    stale = [(cls.__name__, name) for cls in answered_with if issubclass(cls, MaskedSerializerMixin)
             for name in cls.safe_fields if name not in force_instance(cls).fields]
    assert stale == []


def test_a_text_field_is_masked_unless_declared_safe():
    class Answer(MaskedSerializerMixin, serializers.Serializer):
        safe_fields = ("code",)
        text = serializers.CharField()
        code = serializers.CharField()
        count = serializers.IntegerField()
        moment = serializers.DateTimeField()

    fields = Answer().fields
    assert [name for name, field in fields.items() if not is_safe_field(Answer(), name, field)] == ["text"]


def test_the_renderer_masks_what_no_serializer_made():
    assert settings.REST_FRAMEWORK["DEFAULT_RENDERER_CLASSES"] == [
        f"{MaskingJSONRenderer.__module__}.{MaskingJSONRenderer.__name__}"]
