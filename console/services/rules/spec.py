"""What a rule is: its match and action as the API takes them, checked (text PostgreSQL can
store, regular expressions PostgreSQL can run, ladders within bounds), and said in plain words."""

from __future__ import annotations

from typing import Any, TypeGuard

from console import json_path
from console.access.roles import ACT, PURGE
from console.models import Rule
from console.refusals import Refusal
from console.services.parsing import (
    postgres_regex_problem,
    unstorable_text,
    unstorable_value,
)

MATCH_KEYS = ("origin", "reason", "exception_type", "exception_message", "header", "body_path", "min_deaths",
              "min_replays", "older_than_seconds", "max_size")
ACTIONS = ("retry", "forward", "mark_failed", "discard", "hold")
THEN = ("next_rule", "hold", "mark_failed")
#: The ladders of the seeds: COM+ Queued Components' retry queues (1, 2, 4, 8, 16 minutes, three
#: tries each); WCF over MSMQ read as five tries at once, then two cycles of five, 30 minutes apart.
PRESETS = {
    "com+": [{"delay_seconds": minutes * 60, "tries": 3} for minutes in (1, 2, 4, 8, 16)],
    "wcf": [{"delay_seconds": 0, "tries": 5}, {"delay_seconds": 1800, "tries": 5}, {"delay_seconds": 1800, "tries": 5}],
}
#: The job kind each action asks for, whose permission enabling the rule needs.
ACTION_PERMISSION = {"retry": ACT, "forward": ACT, "mark_failed": ACT, "discard": PURGE, "hold": ACT}
#: The largest number a rule takes (a position, a delay in seconds, a count): PostgreSQL's integer.
MAX_NUMBER = 2**31 - 1


class RuleError(Refusal):
    """A rule the console refuses, with a message for the operator."""



def clean_match(match: Any) -> dict[str, Any]:
    if match in (None, ""):
        return {}
    if not isinstance(match, dict):
        raise RuleError("match must be an object")
    unknown = sorted(set(match) - set(MATCH_KEYS))
    if unknown:
        raise RuleError(f"match does not take {', '.join(unknown)} (it takes {', '.join(MATCH_KEYS)})")
    cleaned: dict[str, Any] = {}
    for key, value in match.items():
        if value in (None, ""):
            continue
        if key in ("origin", "reason"):
            cleaned[key] = _text(value, f"match.{key}")
        elif key in ("exception_type", "exception_message"):
            cleaned[key] = _pattern(value, f"match.{key}")
        elif key == "header":
            if not isinstance(value, dict) or not value.get("name"):
                raise RuleError('match.header is {"name": ..., "value": ...}')
            cleaned[key] = {"name": _text(value["name"], "match.header.name"),
                            "value": _text(value.get("value", ""), "match.header.value")}
        elif key == "body_path":
            if not isinstance(value, dict) or not value.get("path"):
                raise RuleError('match.body_path is {"path": "$.a.b", "value": ...}')
            path_steps(value["path"])
            if problem := unstorable_value(value.get("value")):
                raise RuleError(f"match.body_path.value {problem}")
            cleaned[key] = {"path": value["path"], "value": value.get("value")}
        else:
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_NUMBER:
                raise RuleError(f"match.{key} must be a whole number from 0 to {MAX_NUMBER}")
            cleaned[key] = value
    return cleaned


def clean_action(action: Any) -> dict[str, Any]:
    if not isinstance(action, dict) or action.get("kind") not in ACTIONS:
        raise RuleError(f"action.kind must be one of {', '.join(ACTIONS)}")
    kind = action["kind"]
    if kind == "forward":
        return {"kind": kind, "target": _text(action.get("target"), "action.target", required=True)}
    if kind != "retry":
        return {"kind": kind}
    preset = action.get("preset")
    ladder: Any
    if preset:
        if preset not in PRESETS:
            raise RuleError(f"action.preset must be one of {', '.join(PRESETS)}")
        ladder = PRESETS[preset]
    else:
        ladder = action.get("ladder")
    if not isinstance(ladder, list) or not ladder:
        raise RuleError('a retry needs a ladder: [{"delay_seconds": 60, "tries": 3}, ...] or a preset')
    steps = []
    for step in ladder:
        delay, tries = (step.get("delay_seconds"), step.get("tries")) if isinstance(step, dict) else (None, None)
        if (not _whole_number(delay) or not _whole_number(tries)
                or not 0 <= delay <= MAX_NUMBER or not 1 <= tries <= 1000):
            raise RuleError(f"each ladder step has delay_seconds (0 to {MAX_NUMBER}) and tries (1 to 1000)")
        steps.append({"delay_seconds": delay, "tries": tries})
    then = action.get("then") or "hold"
    if then not in THEN:
        raise RuleError(f"action.then must be one of {', '.join(THEN)}")
    return {"kind": kind, "ladder": steps, "then": then, **({"preset": preset} if preset else {})}


def _whole_number(value: Any) -> TypeGuard[int]:
    """An int, and not a bool (which Python counts as one)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _text(value: Any, name: str, *, required: bool = False) -> str:
    if not isinstance(value, str) or (required and not value.strip()) or len(value) > 500:
        raise RuleError(f"{name} must be text of at most 500 characters" + (" (required)" if required else ""))
    if problem := unstorable_text(value):  # the rule's jsonb columns could not hold it
        raise RuleError(f"{name} {problem}")
    return value.strip() if required else value


def _pattern(value: Any, name: str) -> str:
    """A regular expression as PostgreSQL reads it, which is where rules run it (matching)."""
    text = _text(value, name)
    if problem := postgres_regex_problem(text):
        raise RuleError(f"{name} is not a regular expression PostgreSQL can run: {problem}")
    return text


def check_patterns(rule: Rule) -> None:
    """RuleError when a regular expression of a saved rule is one PostgreSQL refuses (a rule
    saved before patterns were checked by PostgreSQL), or its body path one the path syntax
    cannot read (saved when malformed text was skipped): a dry run says so instead of failing."""
    match = rule.match or {}
    try:
        for key in ("exception_type", "exception_message"):
            if isinstance(match.get(key), str):
                _pattern(match[key], f"match.{key}")
        if isinstance(match.get("body_path"), dict):
            path_steps(match["body_path"].get("path"))
    except RuleError as exc:
        raise RuleError(f"rule {rule.name!r}: {exc}; change it") from None


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


def ladder_length(action: dict[str, Any]) -> int:
    return sum(step["tries"] for step in action.get("ladder", []))


def step_delay(action: dict[str, Any], tries_done: int) -> int:
    """The delay before try number ``tries_done + 1`` of the ladder."""
    for step in action["ladder"]:
        if tries_done < step["tries"]:
            delay: int = step["delay_seconds"]
            return delay
        tries_done -= step["tries"]
    raise ValueError("the ladder has run out")


def describe_action(action: dict[str, Any]) -> str:
    """The action in plain words (the origins' policies and the rules page say it so)."""
    kind = action.get("kind")
    if kind == "retry":
        steps = ", ".join(f"{step['tries']} × {_duration(step['delay_seconds'])}" for step in action["ladder"])
        then = {"next_rule": "the next rule", "hold": "hold for a person", "mark_failed": "mark failed"}
        return f"retries {steps}, then {then[action['then']]}"
    if kind == "forward":
        return f"forwards to {action['target']}"
    said = {"mark_failed": "marks failed", "discard": "discards", "hold": "holds for a person"}
    return said.get(str(kind), str(kind))


def _duration(seconds: int) -> str:
    if seconds == 0:
        return "at once"
    if seconds % 60 == 0:
        return f"{seconds // 60} min"
    return f"{seconds} s"
