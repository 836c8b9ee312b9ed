"""``header``: a header the letter carries, with a value or any."""

from __future__ import annotations

from typing import Any

from django.db.models import Q

from console.services.letter_filters import header_condition
from console.services.rules.matches.base import MatchKind
from console.services.rules.values import RuleError, text


class Header(MatchKind):
    help = 'A header the letter carries: {"name": ..., "value": ...}; any value when "value" is empty'
    example = {"name": "tenant", "value": "acme"}
    schema = {"type": "object", "required": ["name"],
              "properties": {"name": {"type": "string"}, "value": {"type": "string"}}}

    def clean(self, value: Any, name: str) -> dict[str, str]:
        if not isinstance(value, dict) or not value.get("name"):
            raise RuleError(f'{name} is {{"name": ..., "value": ...}}')
        return {"name": text(value["name"], f"{name}.name"), "value": text(value.get("value", ""), f"{name}.value")}

    def condition(self, value: Any, *, alone: bool) -> Q:
        """As the letters' header filter decides; alone, led by the headers' index."""
        return header_condition(value["name"], value.get("value"), indexed=alone)
