"""What a kind of match is: the condition one key of a rule's ``match`` sets on a letter.

A kind declares, in its own module of this package:

- ``help``, ``example`` and ``schema``: its field on the Rules page and in the API schema;
- ``clean(value, name)``: its value as the API takes it (RuleError for anything else; ``name``
  is the key's place, ``match.reason``, for the message);
- ``check(value, name)``: a saved rule's value looked at again before a round or a dry run
  uses it (a value saved before a check existed); nothing by default;
- ``condition(value, alone=...)``: the letters it takes, as a condition PostgreSQL decides:
  ``alone`` when the rule's query is its own (a dry run, a re-decision: an index may lead),
  else one condition among the whole rule set's in one pass over the letters
  (console.services.rules.matching). Every kind is decided in the database; none needs a
  Python decision for a single letter.

Shapes most kinds share are here: a word found in a text, a field a regular expression takes,
a number at least or at most a count.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.db.models import Q

from console.services import match_words
from console.services.rules.values import count, pattern, text


class MatchKind:
    help: ClassVar[str] = ""
    example: ClassVar[Any] = None
    schema: ClassVar[dict[str, Any]] = {"type": "string"}

    def clean(self, value: Any, name: str) -> Any:
        raise NotImplementedError

    def check(self, value: Any, name: str) -> None:
        """A saved value, checked again (nothing to check by default)."""

    def condition(self, value: Any, *, alone: bool) -> Q:
        raise NotImplementedError


class WordMatches(MatchKind):
    """The word is found in the letter's ``fields`` (any of them) as the letters' filters find
    it (console.services.match_words): a part in any case, or "exactly" in quotes."""

    fields: ClassVar[tuple[str, ...]]

    def clean(self, value: Any, name: str) -> str:
        return text(value, name)

    def condition(self, value: Any, *, alone: bool) -> Q:
        return match_words.condition(value, *self.fields)


class PatternFinds(MatchKind):
    """A regular expression (PostgreSQL's, where rules run it) finds something in ``field``, in
    any case: a plain word reads as the letters' filters read it (a part, any case), and a
    quoted word is exact there too (console.services.match_words)."""

    field: ClassVar[str]

    def clean(self, value: Any, name: str) -> str:
        return text(value, name) if match_words.exactly(str(value)) is not None else pattern(value, name)

    def check(self, value: Any, name: str) -> None:
        if isinstance(value, str) and match_words.exactly(value) is None:
            pattern(value, name)

    def condition(self, value: Any, *, alone: bool) -> Q:
        whole = match_words.exactly(value)
        return Q(**{self.field: whole}) if whole is not None else Q(**{f"{self.field}__iregex": value})


class CountBound(MatchKind):
    """The letter's ``field`` is at least (``lookup`` "gte") or at most ("lte") a whole number."""

    field: ClassVar[str]
    lookup: ClassVar[str]
    schema: ClassVar[dict[str, Any]] = {"type": "integer", "minimum": 0}

    def clean(self, value: Any, name: str) -> int:
        return count(value, name)

    def condition(self, value: Any, *, alone: bool) -> Q:
        return Q(**{f"{self.field}__{self.lookup}": value})
