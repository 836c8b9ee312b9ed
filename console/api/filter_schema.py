"""The OpenAPI parameters of a list, read from its declared filter set: the filter set that parses
a list's query parameters (console.services.filtersets, letter_filters) is also what the API
document says about them, so the two cannot drift apart.

A whole number (parsing.WholeNumberField) is an integer with its range, a moment a date-time,
a flag a boolean, a choice an enum, text a string (with its length limit); ``help_text`` (or
the label) is the description.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from django import forms
from django_filters import FilterSet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter

from console.services.parsing import FlagField, MomentField, WholeNumberField


def _schema(field: forms.Field) -> dict | OpenApiTypes:
    if isinstance(field, WholeNumberField):
        return {"type": "integer", "minimum": field.min_value, "maximum": field.max_value}
    if isinstance(field, MomentField):
        return OpenApiTypes.DATETIME
    if isinstance(field, FlagField):
        return OpenApiTypes.BOOL
    if isinstance(field, forms.ChoiceField):
        choices = cast("Iterable[tuple[Any, Any]]", field.choices)
        return {"type": "string", "enum": [str(value) for value, _ in choices if value != ""]}
    schema: dict = {"type": "string"}
    max_length = getattr(field, "max_length", None)
    if max_length:
        schema["maxLength"] = max_length
    return schema


def parameters_of(filterset: type[FilterSet]) -> list[OpenApiParameter]:
    """The query parameters ``filterset`` declares, as drf-spectacular's OpenApiParameters."""
    parameters = []
    for name, declared in filterset.base_filters.items():
        field = declared.field
        description = declared.extra.get("help_text") or str(declared.label or "")
        parameters.append(OpenApiParameter(name, _schema(field), OpenApiParameter.QUERY, description=description))
    return parameters
