"""``header``: a header the letter carries, with a value or any."""

from __future__ import annotations

from typing import Any

from django.db.models import Exists, OuterRef, Q

from console.models.letter import LetterSearch
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
        """The letter's own headers decide. Alone, LetterSearch's GIN index on the headers (a
        copy kept off the letters table) finds the candidates first, as the letters' filter
        does (console.services.letter_filters); a letter whose search row is still a
        placeholder is a candidate too. Among the rule set's, a pass reads every letter anyway."""
        header, wanted = value["name"], value.get("value")
        if wanted in (None, ""):
            return Q(headers__has_key=header)
        on_letter = Q(headers__contains={header: wanted})
        if not alone:
            return on_letter
        candidates = LetterSearch.objects.filter(Q(headers__contains={header: wanted}) | Q(pending=True),
                                                 letter_id=OuterRef("pk"))
        return Q(Exists(candidates)) & on_letter
