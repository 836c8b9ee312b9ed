"""The kinds of a rule's match: one module per key a ``match`` may hold (console.services.rules.
matches.base says what each declares), registered below by dotted path (console.kinds).

Adding a kind of match is a module here and a line below (or :func:`register`, for a kind that
lives elsewhere, a test's own): the API takes it and its schema describes it, the Rules page
lists it, and the dry run and a round decide it, with no other change.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Q

from console.kinds import Kinds, instance
from console.models import Rule
from console.services.rules.matches.base import MatchKind
from console.services.rules.values import RuleError

#: key of a rule's match -> dotted path of its MatchKind class; the Rules page lists them in
#: this order.
KINDS: Kinds[MatchKind] = Kinds("match", {
    "origin": "console.services.rules.matches.origin.Origin",
    "reason": "console.services.rules.matches.reason.Reason",
    "exception_type": "console.services.rules.matches.exception_type.ExceptionType",
    "exception_message": "console.services.rules.matches.exception_message.ExceptionMessage",
    "header": "console.services.rules.matches.header.Header",
    "body_path": "console.services.rules.matches.body_path.BodyPath",
    "min_deaths": "console.services.rules.matches.min_deaths.MinDeaths",
    "min_replays": "console.services.rules.matches.min_replays.MinReplays",
    "older_than_seconds": "console.services.rules.matches.older_than_seconds.OlderThanSeconds",
    "max_size": "console.services.rules.matches.max_size.MaxSize",
}, make=instance)


def register(name: str, dotted: str) -> None:
    """Add the kind of match whose MatchKind class ``dotted`` names, under the key ``name``."""
    KINDS.register(name, dotted)


def unregister(name: str) -> None:
    KINDS.unregister(name)


def clean_match(match: Any) -> dict[str, Any]:
    """A rule's match as the API takes it: each key a kind's, each value as its kind cleans it
    (empty values left out); RuleError naming what is wrong."""
    if match in (None, ""):
        return {}
    if not isinstance(match, dict):
        raise RuleError("match must be an object")
    unknown = sorted(key for key in match if key not in KINDS)
    if unknown:
        raise RuleError(f"match does not take {', '.join(unknown)} (it takes {', '.join(KINDS)})")
    return {key: KINDS.get(key).clean(value, f"match.{key}") for key, value in match.items()
            if value not in (None, "")}


def check_match(rule: Rule) -> None:
    """RuleError when a saved rule's match holds what its kind would refuse now (a regular
    expression PostgreSQL refuses, saved before patterns were checked by PostgreSQL; a body path
    saved when malformed text was skipped): a dry run says so instead of failing."""
    try:
        for key, value in (rule.match or {}).items():
            if key not in KINDS:
                raise RuleError(f"match does not take {key} (it takes {', '.join(KINDS)})")
            KINDS.get(key).check(value, f"match.{key}")
    except RuleError as exc:
        raise RuleError(f"rule {rule.name!r}: {exc}; change it") from None


def match_condition(match: dict[str, Any], *, alone: bool) -> Q:
    """Every key's condition together (Q() for an empty match: every letter)."""
    condition = Q()
    for key, value in match.items():
        condition &= KINDS.get(key).condition(value, alone=alone)
    return condition


def described() -> list[dict[str, Any]]:
    """Each kind's key, help, example and schema, in the registry's order (the Rules page, the
    API schema)."""
    return [{"key": key, "help": kind.help, "example": kind.example, "schema": kind.schema}
            for key, kind in zip(KINDS.names(), KINDS.all(), strict=True)]


__all__ = ["KINDS", "MatchKind", "check_match", "clean_match", "described", "match_condition", "register",
           "unregister"]
