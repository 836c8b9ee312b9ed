"""Changing the redaction rules (console.models.RedactionRule): checked, then audited."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from console.access.actors import Actor
from console.access.redactor import RuleError, compile_rule
from console.models import RedactionRule
from console.services import audit


@transaction.atomic
def do_set_redaction_rule(*, actor: Actor, kind: str, pattern: str, note: str = "", enabled: bool = True,
                          rule: RedactionRule | None = None) -> RedactionRule:
    """Add a rule (or change ``rule``); raises RuleError when the pattern cannot be used."""
    if kind not in RedactionRule.Kind.values:
        raise RuleError(f"unknown kind {kind!r}; kinds: {', '.join(RedactionRule.Kind.values)}")
    pattern = pattern.strip()
    compile_rule(kind, pattern)
    clash = RedactionRule.objects.filter(kind=kind, pattern=pattern)
    if rule is not None:
        clash = clash.exclude(pk=rule.pk)
    if clash.exists():
        raise RuleError("this rule exists already")
    before = None if rule is None else _facts(rule)
    rule = rule or RedactionRule()
    rule.kind, rule.pattern, rule.note, rule.enabled = kind, pattern, note.strip(), enabled
    rule.save()
    audit.record("redaction_rule_set", actor=actor, target=f"{kind}: {pattern}",
                 details={"rule": rule.pk, "before": before, "after": _facts(rule)})
    return rule


@transaction.atomic
def do_delete_redaction_rule(rule: RedactionRule, *, actor: Actor) -> None:
    """Remove a rule; what it masked is shown again to viewers."""
    facts = _facts(rule)
    pk = rule.pk
    rule.delete()
    audit.record("redaction_rule_deleted", actor=actor, target=f"{facts['kind']}: {facts['pattern']}",
                 details={"rule": pk, "before": facts})


def _facts(rule: RedactionRule) -> dict[str, Any]:
    return {"kind": rule.kind, "pattern": rule.pattern, "note": rule.note, "enabled": rule.enabled}
