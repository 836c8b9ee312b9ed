"""Handling rules: what a rule is (checked), its versions, which letters it matches, and its
dry run. What a rule does is console.jobs.rules.

A rule's ``match`` (every key optional): ``origin`` and ``reason`` (exact), ``exception_type``
and ``exception_message`` (regular expressions, as PostgreSQL reads them), ``header``
(``{"name", "value"}``), ``body_path`` (``{"path": "$.order.status", "value": ...}`` on a JSON
body), ``min_deaths``, ``min_replays`` (times the console replayed the letter's lineage),
``older_than_seconds`` (since capture) and ``max_size`` (bytes). Its ``action``: ``retry`` along a
``ladder`` of ``{"delay_seconds", "tries"}`` steps (or a ``preset``: "com+" or "wcf") and
``then`` ("next_rule", "hold" or "mark_failed") once the ladder has run out; ``forward`` to a
``target`` queue; ``mark_failed``; ``discard`` (a purge); ``hold`` (for a person).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from console.access.roles import ACT, PURGE, has, role_holding
from console.access.scope import scope_of, visible
from console.models import DeadLetter, DeadPlace, LetterHandling, LetterState, Rule, RuleVersion
from console.brokers import bounded_json
from console.services import audit
from console.services.audit import Actor, actor_name, actor_user
from console.services.parsing import postgres_regex_problem, unstorable_text, unstorable_value
from console.services.selection import filter_letters
from console.refusals import Refusal

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
SAMPLE = 20
#: The largest number a rule takes (a position, a delay in seconds, a count): PostgreSQL's integer.
MAX_NUMBER = 2**31 - 1


class RuleError(Refusal):
    """A rule the console refuses, with a message for the operator."""


# -- what a rule is -------------------------------------------------------------------------------

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
        if (not all(isinstance(n, int) and not isinstance(n, bool) for n in (delay, tries))
                or not 0 <= delay <= MAX_NUMBER or not 1 <= tries <= 1000):
            raise RuleError(f"each ladder step has delay_seconds (0 to {MAX_NUMBER}) and tries (1 to 1000)")
        steps.append({"delay_seconds": delay, "tries": tries})
    then = action.get("then") or "hold"
    if then not in THEN:
        raise RuleError(f"action.then must be one of {', '.join(THEN)}")
    return {"kind": kind, "ladder": steps, "then": then, **({"preset": preset} if preset else {})}


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
    saved before patterns were checked by PostgreSQL): a dry run says so instead of failing."""
    for key in ("exception_type", "exception_message"):
        if isinstance((rule.match or {}).get(key), str):
            try:
                _pattern(rule.match[key], f"match.{key}")
            except RuleError as exc:
                raise RuleError(f"rule {rule.name!r}: {exc}; change it") from None


def path_steps(path: Any) -> list[str | int]:
    """``$.order.items[0].sku`` (or ``order.items.0.sku``) as keys and indexes."""
    if not isinstance(path, str) or not path.strip() or len(path) > 500 or unstorable_text(path):
        raise RuleError("match.body_path.path must be a path like $.order.status")
    text = path.strip()
    text = text[1:] if text.startswith("$") else text
    steps: list[str | int] = []
    for part in re.findall(r"\[([0-9]+)\]|\.?([^.\[\]]+)", text):
        index, key = part  # ASCII digits are an index ('²'.isdigit() is true, and int() refuses it)
        steps.append(int(index) if index else (int(key) if key.isascii() and key.isdigit() else key))
    if not steps:
        raise RuleError("match.body_path.path names nothing")
    return steps


def ladder_length(action: dict) -> int:
    return sum(step["tries"] for step in action.get("ladder", []))


def step_delay(action: dict, tries_done: int) -> int:
    """The delay before try number ``tries_done + 1`` of the ladder."""
    for step in action["ladder"]:
        if tries_done < step["tries"]:
            return step["delay_seconds"]
        tries_done -= step["tries"]
    raise ValueError("the ladder has run out")


def describe_action(action: dict) -> str:
    """The action in plain words (the origins' policies and the rules page say it so)."""
    kind = action.get("kind")
    if kind == "retry":
        steps = ", ".join(f"{step['tries']} × {_duration(step['delay_seconds'])}" for step in action["ladder"])
        then = {"next_rule": "the next rule", "hold": "hold for a person", "mark_failed": "mark failed"}
        return f"retries {steps}, then {then[action['then']]}"
    if kind == "forward":
        return f"forwards to {action['target']}"
    return {"mark_failed": "marks failed", "discard": "discards", "hold": "holds for a person"}.get(kind, str(kind))


def _duration(seconds: int) -> str:
    if seconds == 0:
        return "at once"
    if seconds % 60 == 0:
        return f"{seconds // 60} min"
    return f"{seconds} s"


# -- which letters a rule matches -----------------------------------------------------------------

def in_rule_scope(rule: Rule, letters: QuerySet) -> QuerySet:
    if rule.place_id is not None:
        return letters.filter(place_id=rule.place_id)
    if rule.broker_id is not None:
        return letters.filter(broker_id=rule.broker_id)
    return letters


def matching(rule: Rule, letters: QuerySet) -> list[int]:
    """Ids of ``letters`` (in the rule's scope) that its ``match`` takes, in id order."""
    match = rule.match or {}
    qs = in_rule_scope(rule, letters)
    if "origin" in match:
        qs = filter_letters({"origin": match["origin"]}, qs)
    if "reason" in match:
        qs = qs.filter(reason=match["reason"])
    if "exception_type" in match:
        qs = qs.filter(exception_type__regex=match["exception_type"])
    if "exception_message" in match:
        qs = qs.filter(exception_message__regex=match["exception_message"])
    if "header" in match:
        qs = filter_letters({"header": match["header"]["name"], "header_value": match["header"]["value"]}, qs)
    if "min_deaths" in match:
        qs = qs.filter(death_count__gte=match["min_deaths"])
    if "min_replays" in match:
        qs = qs.filter(replay_count__gte=match["min_replays"])
    if "older_than_seconds" in match:
        qs = qs.filter(captured_at__lte=timezone.now() - timedelta(seconds=match["older_than_seconds"]))
    if "max_size" in match:
        qs = qs.filter(body_size__lte=match["max_size"])
    if "body_path" not in match:
        return list(qs.order_by("id").values_list("id", flat=True))
    steps, wanted = path_steps(match["body_path"]["path"]), match["body_path"]["value"]
    return [letter_id for letter_id, body in qs.order_by("id").values_list("id", "body").iterator(chunk_size=500)
            if _at_path(bytes(body), steps, wanted)]


def _at_path(body: bytes, steps: list[str | int], wanted: Any) -> bool:
    try:
        value = bounded_json.loads(body)  # content is hostile: bounded in depth and size
    except (ValueError, RecursionError):
        return False
    for step in steps:
        if isinstance(step, int) and isinstance(value, list) and -len(value) <= step < len(value):
            value = value[step]
        elif isinstance(value, dict) and str(step) in value:
            value = value[str(step)]
        else:
            return False
    return value == wanted or (isinstance(wanted, str) and not isinstance(value, (dict, list)) and str(value) == wanted)


def handled_elsewhere() -> Q:
    """Letters no rule looks at now: held for a person by a rule, or in a rule's unfinished job."""
    from console.models import Job

    return Q(handling__held=True) | (Q(handling__job__isnull=False) & ~Q(handling__job__status__in=Job.FINISHED))


def open_letters(letters: QuerySet | None = None) -> QuerySet:
    """Held letters a rule may act on now."""
    qs = DeadLetter.objects.all() if letters is None else letters
    return qs.filter(state=LetterState.HELD).exclude(handled_elsewhere())


def enabled_rules() -> list[Rule]:
    return list(Rule.objects.filter(enabled=True, deleted_at__isnull=True).order_by("position", "id"))


# -- what the rules would do ------------------------------------------------------------------

@dataclass
class Decision:
    """What one rule does with one letter now. ``what``: the action's kind; for a retry whose
    ladder ran out, its ``then`` ("next_rule" is followed by a later rule's decision); "blocked"
    when a replaying action meets a quarantined letter or an open breaker (it stays held).
    A retry's ``due_at`` is when its next try falls (now or later)."""

    letter_id: int
    rule: Rule
    what: str
    tries_done: int = 0
    due_at: Any = None
    ran_out: bool = False


@dataclass
class _Lineage:
    rule_id: int | None = None
    tries: int = 0
    ran_out: tuple[int, ...] = ()


def decide(rules: list[Rule], letters: QuerySet) -> list[Decision]:
    """First match wins, in the order given: for each of ``letters``, what the first rule that
    matches it does. A retry counts the tries its lineage had on the same rule (a letter that
    came back takes its parent's count on); a rule whose ladder ran out for the lineage is
    passed over. The dry run and the rules' runs (console.jobs.rules) both use this."""
    from console.services.safeguards import rules_may_replay

    matched = [(rule, set(matching(rule, letters))) for rule in rules]
    ids = set().union(*(found for _, found in matched)) if matched else set()
    if not ids:
        return []
    lineage = lineage_of(ids)
    replayable = set(rules_may_replay(DeadLetter.objects.filter(id__in=ids)).values_list("id", flat=True))
    captured = dict(DeadLetter.objects.filter(id__in=ids).values_list("id", "captured_at"))
    decisions: list[Decision] = []
    for letter_id in sorted(ids):
        state = lineage.get(letter_id, _Lineage())
        for rule, found in matched:
            if letter_id not in found or rule.pk in state.ran_out:
                continue
            kind = rule.action["kind"]
            if kind == "retry":
                done = state.tries if state.rule_id == rule.pk else 0
                if done >= ladder_length(rule.action):
                    then = rule.action["then"]
                    decisions.append(Decision(letter_id, rule, then, tries_done=done, ran_out=True))
                    if then == "next_rule":
                        continue
                    break
                if letter_id not in replayable:
                    decisions.append(Decision(letter_id, rule, "blocked", tries_done=done))
                    break
                due = captured[letter_id] + timedelta(seconds=step_delay(rule.action, done))
                decisions.append(Decision(letter_id, rule, "retry", tries_done=done, due_at=due))
                break
            if kind == "forward" and letter_id not in replayable:
                decisions.append(Decision(letter_id, rule, "blocked"))
                break
            decisions.append(Decision(letter_id, rule, kind))
            break
    return decisions


def lineage_of(ids: set[int]) -> dict[int, _Lineage]:
    """Each letter's handling so far: its own, else its parent's (a return carries it on)."""
    parents = dict(DeadLetter.objects.filter(id__in=ids, parent__isnull=False).values_list("id", "parent_id"))
    rows = {row["letter_id"]: row for row in LetterHandling.objects.filter(
        letter_id__in=ids | set(parents.values())).values("letter_id", "rule_id", "tries", "ran_out")}
    found = {}
    for letter_id in ids:
        row = rows.get(letter_id) or rows.get(parents.get(letter_id))
        if row is not None:
            found[letter_id] = _Lineage(row["rule_id"], row["tries"], tuple(row["ran_out"] or ()))
    return found


# -- dry run -----------------------------------------------------------------------------------

@dataclass
class DryRun:
    matched: int = 0
    by_action: dict[str, int] = field(default_factory=dict)
    sample: list[int] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"matched": self.matched, "by_action": self.by_action, "sample": self.sample}


def dry_run(rule: Rule, *, reader: Actor) -> DryRun:
    """What ``rule`` would do now to the held letters ``reader`` may see, were it enabled at its
    position: letters an enabled rule before it takes are not counted. ``by_action`` says what
    would happen to each (:func:`decide`, the same code the enabled rule runs)."""
    earlier = [r for r in enabled_rules() if (r.position, r.pk) < (rule.position, rule.pk or 0) and r.pk != rule.pk]
    for each in (*earlier, rule):
        check_patterns(each)
    letters = visible(reader, open_letters())
    decisions = decide([*earlier, rule], letters)
    mine = [d for d in decisions if d.rule.pk == rule.pk]
    result = DryRun(matched=len({d.letter_id for d in mine}))
    for decision in mine:
        result.by_action[decision.what] = result.by_action.get(decision.what, 0) + 1
    result.sample = sorted({d.letter_id for d in mine})[:SAMPLE]
    return result


# -- changes (audited) -------------------------------------------------------------------------

def _scope_of_rule(scope: Any) -> tuple[int | None, int | None]:
    """(broker id, place id) from the API's ``{}``, ``{"broker": id}`` or ``{"place": id}``."""
    if scope in (None, "", {}):
        return None, None
    if not isinstance(scope, dict) or len(scope) != 1 or not set(scope) <= {"broker", "place"}:
        raise RuleError('scope is {}, {"broker": id} or {"place": id}')
    (key, value), = scope.items()
    if isinstance(value, bool) or not isinstance(value, int) or not 0 < value < 2**63:
        raise RuleError(f"scope.{key} must be an id")
    if key == "place":
        place = DeadPlace.objects.filter(pk=value).first()
        if place is None:
            raise RuleError(f"no dead place {value}")
        return None, place.pk
    from console.models import Broker

    if not Broker.objects.filter(pk=value).exists():
        raise RuleError(f"no broker {value}")
    return value, None


def _check_reach(actor: Actor, broker_id: int | None, place_id: int | None) -> None:
    """A limited user makes and changes rules only within what they may act on."""
    scope = scope_of(actor)
    if scope.unlimited:
        return
    if place_id is not None:
        broker = DeadPlace.objects.filter(pk=place_id).values_list("broker_id", flat=True).first()
        if scope.allows(broker, place_id):
            return
    elif broker_id is not None and broker_id in scope.brokers:
        return
    raise RuleError("the rule's scope reaches beyond what you may act on: limit it to your broker or place")


def _save_version(rule: Rule, actor: Actor) -> None:
    RuleVersion.objects.create(rule=rule, version=rule.version, name=rule.name, broker_id_scope=rule.broker_id,
                               place_id_scope=rule.place_id, match=rule.match, action=rule.action,
                               made_by=actor_name(actor))


def _details(rule: Rule) -> dict[str, Any]:
    return {"rule": rule.pk, "version": rule.version, "name": rule.name, "position": rule.position,
            "scope": {"broker": rule.broker_id, "place": rule.place_id}, "match": rule.match, "action": rule.action}


@transaction.atomic
def do_create_rule(*, actor: Actor, name: str, action: Any, match: Any = None, scope: Any = None,
                   position: int | None = None, enabled: bool = False, reason: str = "") -> Rule:
    """A new rule, a draft unless ``enabled`` (then enabled as :func:`do_enable` does)."""
    if not isinstance(name, str) or not name.strip() or len(name.strip()) > 100:
        raise RuleError("a rule needs a name of at most 100 characters")
    if Rule.objects.filter(name=name.strip()).exists():
        raise RuleError(f"a rule named {name.strip()!r} exists already")
    broker_id, place_id = _scope_of_rule(scope)
    _check_reach(actor, broker_id, place_id)
    if position is not None and (isinstance(position, bool) or not isinstance(position, int)
                                 or abs(position) > MAX_NUMBER):
        raise RuleError(f"position must be a whole number from -{MAX_NUMBER} to {MAX_NUMBER}")
    if position is None:
        last = Rule.objects.filter(deleted_at__isnull=True).order_by("-position").values_list("position", flat=True)
        position = (last.first() or 0) + 10
    rule = Rule.objects.create(name=name.strip(), position=position, broker_id=broker_id, place_id=place_id,
                               match=clean_match(match), action=clean_action(action))
    _save_version(rule, actor)
    audit.record("rule.created", actor=actor, reason=reason, **_where(rule), details=_details(rule))
    if enabled:
        rule = do_enable(rule, actor=actor, reason=reason)
    return rule


@transaction.atomic
def do_update_rule(rule: Rule, *, actor: Actor, reason: str = "", **changes: Any) -> Rule:
    """Change a rule: name, scope, match or action make a new version (the old one is kept);
    position and ``enabled`` do not. An enabled rule's new version is enabled by whoever made
    it, with their rights (as :func:`do_enable`)."""
    rule = Rule.objects.select_for_update().get(pk=rule.pk, deleted_at__isnull=True)
    _check_reach(actor, rule.broker_id, rule.place_id)
    versioned = False
    if "name" in changes and changes["name"] != rule.name:
        name = changes["name"]
        if not isinstance(name, str) or not name.strip() or len(name.strip()) > 100:
            raise RuleError("a rule needs a name of at most 100 characters")
        if Rule.objects.filter(name=name.strip()).exclude(pk=rule.pk).exists():
            raise RuleError(f"a rule named {name.strip()!r} exists already")
        rule.name, versioned = name.strip(), True
    if "scope" in changes:
        broker_id, place_id = _scope_of_rule(changes["scope"])
        _check_reach(actor, broker_id, place_id)
        if (broker_id, place_id) != (rule.broker_id, rule.place_id):
            rule.broker_id, rule.place_id, versioned = broker_id, place_id, True
    if "match" in changes:
        match = clean_match(changes["match"])
        versioned |= match != rule.match
        rule.match = match
    if "action" in changes:
        action = clean_action(changes["action"])
        versioned |= action != rule.action
        rule.action = action
    moved = False
    if "position" in changes and changes["position"] != rule.position:
        position = changes["position"]
        if isinstance(position, bool) or not isinstance(position, int) or abs(position) > MAX_NUMBER:
            raise RuleError(f"position must be a whole number from -{MAX_NUMBER} to {MAX_NUMBER}")
        rule.position, moved = position, True
    if versioned:
        rule.version += 1
        _save_version(rule, actor)
    if versioned or moved:
        rule.save()
        audit.record("rule.changed", actor=actor, reason=reason, **_where(rule), details=_details(rule))
    wanted = changes.get("enabled", rule.enabled)
    if wanted and (versioned or not rule.enabled):
        rule = do_enable(rule, actor=actor, reason=reason)
    elif not wanted and rule.enabled:
        rule = do_disable(rule, actor=actor, reason=reason)
    return rule


@transaction.atomic
def do_enable(rule: Rule, *, actor: Actor, reason: str = "") -> Rule:
    """Enable a rule: the enabler needs the permission of its action's jobs (a discard rule:
    an admin's) and the rule's scope in theirs; the rule then acts with their rights. The audit
    row records the dry run's numbers at that moment."""
    rule = Rule.objects.select_for_update().get(pk=rule.pk, deleted_at__isnull=True)
    needed = ACTION_PERMISSION[rule.action["kind"]]
    if actor_user(actor) is None or not has(actor, needed):
        raise RuleError(f"enabling a rule that {describe_action(rule.action)} needs the {role_holding(needed)} role"
                        " (a person's: the rule acts with the rights of whoever enables it)")
    _check_reach(actor, rule.broker_id, rule.place_id)
    numbers = dry_run(rule, reader=actor)
    rule.enabled, rule.enabled_by, rule.enabled_at, rule.last_error = True, actor_user(actor), timezone.now(), ""
    rule.save()
    audit.record("rule.enabled", actor=actor, reason=reason, **_where(rule), count=numbers.matched,
                 details={**_details(rule), "dry_run": numbers.as_dict()})
    return rule


@transaction.atomic
def do_disable(rule: Rule, *, actor: Actor, reason: str = "") -> Rule:
    rule = Rule.objects.select_for_update().get(pk=rule.pk)
    _check_reach(actor, rule.broker_id, rule.place_id)
    rule.enabled = False
    rule.save(update_fields=["enabled"])
    audit.record("rule.disabled", actor=actor, reason=reason, **_where(rule), details=_details(rule))
    return rule


@transaction.atomic
def do_delete_rule(rule: Rule, *, actor: Actor, reason: str = "") -> None:
    """Delete a rule: it stops acting; it and its versions are kept, so the audit's names of it
    stay meaningful (and its name is free again)."""
    rule = Rule.objects.select_for_update().get(pk=rule.pk, deleted_at__isnull=True)
    _check_reach(actor, rule.broker_id, rule.place_id)
    rule.enabled, rule.deleted_at = False, timezone.now()
    rule.name = f"{rule.name} (deleted {rule.pk})"[:100]
    rule.save()
    audit.record("rule.deleted", actor=actor, reason=reason, **_where(rule), details=_details(rule))


def _where(rule: Rule) -> dict[str, Any]:
    """What an audit row of a rule concerns: its place or broker (a rule over everything: neither)."""
    if rule.place_id is not None:
        return {"place": DeadPlace.objects.select_related("broker").get(pk=rule.place_id)}
    if rule.broker_id is not None:
        from console.models import Broker

        return {"broker": Broker.objects.get(pk=rule.broker_id)}
    return {}


def handling_of(letter: DeadLetter) -> LetterHandling | None:
    return LetterHandling.objects.select_related("rule").filter(letter=letter).first()
