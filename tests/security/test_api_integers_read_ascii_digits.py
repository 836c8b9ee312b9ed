"""A number in the API's JSON is ASCII digits (invariant 13): DRF's IntegerField reads a string
through ``int()``, which takes every script's digits ('٣' is 3), so every integer the API reads
is console.services.parsing.ApiIntegerField. A JSON number, or a string of ASCII digits, is read
as before; '٣' and '²' are a 400 naming the field."""

from __future__ import annotations

import pytest
from drf_spectacular.plumbing import force_instance
from rest_framework import serializers

from console.services.parsing import ApiIntegerField
from tests.schema_walk import serializers_in_schema

pytestmark = pytest.mark.django_db


def _integer_fields(serializer) -> list[tuple[str, object]]:
    found = []
    for name, field in serializer.fields.items():
        field = getattr(field, "child", field)
        if isinstance(field, serializers.Serializer):
            found += [(f"{name}.{inner}", f) for inner, f in _integer_fields(field)]
        elif isinstance(field, serializers.IntegerField) and not field.read_only:
            found.append((name, field))
    return found


def test_every_integer_the_api_reads_is_ascii_only():
    read = serializers_in_schema("request")
    assert {"RuleInputSerializer", "JobCreateSerializer"} & {cls.__name__ for cls in read}
    loose = [f"{cls.__name__}.{name}" for cls in read for name, field in _integer_fields(force_instance(cls))
             if not isinstance(field, ApiIntegerField)]
    assert loose == []


@pytest.mark.parametrize("position, status", [("٣", 400), ("²", 400), ("１", 400), ("30", 201), (30, 201)])
def test_a_rules_position_in_other_digits_is_refused(admin, client, position, status):
    client.force_login(admin)
    answer = client.post("/api/rules/", {"name": f"r {position!r}", "action": {"kind": "hold"}, "position": position},
                         content_type="application/json")
    assert answer.status_code == status, answer.content
    if status == 400:
        assert "position" in answer.content.decode()
    else:
        assert answer.json()["position"] == 30
