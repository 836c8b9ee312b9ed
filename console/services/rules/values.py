"""The values a rule is written with, checked as the API takes them: text PostgreSQL can store,
regular expressions PostgreSQL can run, whole numbers within PostgreSQL's integer, and JSON paths
into a body. The rule's match kinds (console.services.rules.matches) and its action
(console.services.rules.spec) are built from these."""

from __future__ import annotations

from typing import Any, TypeGuard

from console import json_path
from console.refusals import Refusal
from console.services.parsing import postgres_regex_problem, unstorable_text

#: The largest number a rule takes (a position, a delay in seconds, a count): PostgreSQL's integer.
MAX_NUMBER = 2**31 - 1


class RuleError(Refusal):
    """A rule the console refuses, with a message for the operator."""


def whole_number(value: Any) -> TypeGuard[int]:
    """An int, and not a bool (which Python counts as one)."""
    return isinstance(value, int) and not isinstance(value, bool)


def count(value: Any, name: str) -> int:
    """A whole number from 0 to MAX_NUMBER."""
    if not whole_number(value) or not 0 <= value <= MAX_NUMBER:
        raise RuleError(f"{name} must be a whole number from 0 to {MAX_NUMBER}")
    return value


def text(value: Any, name: str, *, required: bool = False) -> str:
    if not isinstance(value, str) or (required and not value.strip()) or len(value) > 500:
        raise RuleError(f"{name} must be text of at most 500 characters" + (" (required)" if required else ""))
    if problem := unstorable_text(value):  # the rule's jsonb columns could not hold it
        raise RuleError(f"{name} {problem}")
    return value.strip() if required else value


def pattern(value: Any, name: str) -> str:
    """A regular expression as PostgreSQL reads it, which is where rules run it (matching)."""
    checked = text(value, name)
    if problem := postgres_regex_problem(checked):
        raise RuleError(f"{name} is not a regular expression PostgreSQL can run: {problem}")
    return checked


def path_steps(path: Any) -> list[str | int]:
    """``$.order.items[0].sku`` (or ``order.items.0.sku``: console.json_path's syntax) as the keys
    and indexes PostgreSQL walks (migration 0035's ``console_json_at``): an int is an item of a
    list, else the field of that name (a field named by ASCII digits is an int). A rule reads one
    place, as rules always have: ``..name`` is read as ``.name``, and ``*`` as a field named *."""
    if not isinstance(path, str) or not path.strip() or len(path) > 500 or unstorable_text(path):
        raise RuleError("match.body_path.path must be a path like $.order.status")
    try:
        steps = json_path.steps(path)
    except json_path.PathError as exc:
        raise RuleError(f"match.body_path.path {exc}") from None
    return [key if kind == json_path.INDEX else _field(key) for kind, key in steps]


def _field(name: str | int) -> str | int:
    """ASCII digits are an index ('²'.isdigit() is true, and int() refuses it)."""
    return int(name) if isinstance(name, str) and name.isascii() and name.isdigit() else name
