"""What a rule's action is, as the API takes it, checked (ladders within bounds), and said in
plain words. Its match is in console.services.rules.matches, and the values both are written
with in console.services.rules.values."""

from __future__ import annotations

from typing import Any

from console.access.roles import ACT, PURGE
from console.services.rules.values import MAX_NUMBER, RuleError, text, whole_number

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


def clean_action(action: Any) -> dict[str, Any]:
    if not isinstance(action, dict) or action.get("kind") not in ACTIONS:
        raise RuleError(f"action.kind must be one of {', '.join(ACTIONS)}")
    kind = action["kind"]
    if kind == "forward":
        return {"kind": kind, "target": text(action.get("target"), "action.target", required=True)}
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
        if (not whole_number(delay) or not whole_number(tries)
                or not 0 <= delay <= MAX_NUMBER or not 1 <= tries <= 1000):
            raise RuleError(f"each ladder step has delay_seconds (0 to {MAX_NUMBER}) and tries (1 to 1000)")
        steps.append({"delay_seconds": delay, "tries": tries})
    then = action.get("then") or "hold"
    if then not in THEN:
        raise RuleError(f"action.then must be one of {', '.join(THEN)}")
    return {"kind": kind, "ladder": steps, "then": then, **({"preset": preset} if preset else {})}


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
