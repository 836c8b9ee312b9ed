"""Changes to rules, each audited in its transaction: create, update (a new version when name,
scope, match or action change), enable (with the enabler's rights), disable, delete."""

from __future__ import annotations

import copy
from typing import Any

from django.db import transaction
from django.utils import timezone

from console.access.actors import Actor
from console.access.roles import has, role_holding
from console.access.scope import scope_of
from console.models import Broker, DeadLetter, DeadPlace, LetterHandling, Rule, RuleVersion
from console.services import audit
from console.services.audit import actor_name, actor_user
from console.services.rules.checks import SAFEGUARDS
from console.services.rules.deciding import dry_run
from console.services.rules.matches import clean_match
from console.services.rules.redeciding import redecide
from console.services.rules.spec import ACTION_PERMISSION, clean_action, describe_action
from console.services.rules.values import MAX_NUMBER, RuleError


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
    elif broker_id is not None and scope.allows(broker_id, None):
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
    before = copy.copy(rule) if rule.enabled else None  # what it took, re-decided if it changes
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
        if before is not None:
            redecide(before)
    wanted = changes.get("enabled", rule.enabled)
    if wanted and (versioned or not rule.enabled):
        rule = do_enable(rule, actor=actor, reason=reason)
    elif not wanted and rule.enabled:
        rule = do_disable(rule, actor=actor, reason=reason)
    return rule


@transaction.atomic
def do_enable(rule: Rule, *, actor: Actor, reason: str = "") -> Rule:
    """Enable a rule: the enabler needs the permission of its action's jobs (a discard rule:
    an admin's) and the rule's scope in theirs; the rule then acts with their rights. Its dry
    run, with those rights, must not refuse every letter it would act on now for a fault of the
    rule (a target or origin the enabler may not publish into, a broker that cannot be asked):
    that is refused with the reason. Letters the safeguards hold back (quarantined, breaker
    open) do not count: the rule takes them once a person lets them go. The audit row records
    the dry run at that moment, refusals included."""
    rule = Rule.objects.select_for_update().get(pk=rule.pk, deleted_at__isnull=True)
    needed = ACTION_PERMISSION[rule.action["kind"]]
    if actor_user(actor) is None or not has(actor, needed):
        raise RuleError(f"enabling a rule that {describe_action(rule.action)} needs the {role_holding(needed)} role"
                        " (a person's: the rule acts with the rights of whoever enables it)")
    _check_reach(actor, rule.broker_id, rule.place_id)
    numbers = dry_run(rule, reader=actor, enabler=actor)
    faults = [refused for refused in numbers.refused if refused["code"] not in SAFEGUARDS]
    if faults and not numbers.runs:
        raise RuleError("every letter this rule would act on now would be refused: " + "; ".join(
            f"{refused['count']} to {refused['action'].replace('_', ' ')}: {refused['reason']}" for refused in faults))
    rule.enabled, rule.enabled_by, rule.enabled_at, rule.last_error = True, actor_user(actor), timezone.now(), ""
    rule.save()
    redecide(rule)
    audit.record("rule.enabled", actor=actor, reason=reason, **_where(rule), count=numbers.matched,
                 details={**_details(rule), "dry_run": numbers.as_dict()})
    return rule


@transaction.atomic
def do_disable(rule: Rule, *, actor: Actor, reason: str = "") -> Rule:
    rule = Rule.objects.select_for_update().get(pk=rule.pk)
    _check_reach(actor, rule.broker_id, rule.place_id)
    if rule.enabled:
        redecide(rule)  # what it took or waits for is decided again, without it
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
    if rule.enabled:
        redecide(rule)
    rule.enabled, rule.deleted_at = False, timezone.now()
    rule.name = f"{rule.name} (deleted {rule.pk})"[:100]
    rule.save()
    audit.record("rule.deleted", actor=actor, reason=reason, **_where(rule), details=_details(rule))


def _where(rule: Rule) -> dict[str, Any]:
    """What an audit row of a rule concerns: the rule by its name, and its place or broker (a
    rule over everything: neither)."""
    named = {"target": f"rule {rule.name}"}
    if rule.place_id is not None:
        return {**named, "place": DeadPlace.objects.select_related("broker").get(pk=rule.place_id)}
    if rule.broker_id is not None:
        return {**named, "broker": Broker.objects.get(pk=rule.broker_id)}
    return named


def handling_of(letter: DeadLetter) -> LetterHandling | None:
    return LetterHandling.objects.select_related("rule").filter(letter=letter).first()
