"""What a change of the rule set, or the passing of time, may decide otherwise: put in the rules'
inbox (console.services.rule_inbox), so that each letter is decided once per rule set and a
round never looks at every held letter.

- A change of one rule (enabled, disabled, edited, moved, deleted) can change the decision of a
  letter only if that rule matches it, as it was or as it is: first match wins passes over a
  rule that matches nothing. So the change puts in, in its own transaction, the open letters
  the rule matches (one set-based query per version, whose ids never come into Python), and the
  open letters it had decided (a ladder's try it waits for).
- A rule that waits for an age (``older_than_seconds``) matches a young letter only later: the
  letter is put in for the moment it is old enough, if all else of the rule's match is true.
"""

from __future__ import annotations

import copy
from datetime import timedelta

from django.db.models import QuerySet
from django.utils import timezone

from console.models import DeadLetter, Rule
from console.services import rule_inbox
from console.services.rules.matches import check_match
from console.services.rules.matching import in_rule_scope, matches, open_letters
from console.services.rules.values import RuleError


def redecide(rule: Rule) -> None:
    """In the caller's transaction (a change of ``rule``, given as the version that changes:
    the one before an edit, or the one after), put in the inbox every open letter the change
    can decide otherwise: those ``rule`` matches, each due once it is as old as the rule waits
    for, and those it had decided."""
    letters = open_letters()
    try:
        check_match(rule)
    except RuleError:  # a pattern PostgreSQL refuses (saved before they were checked): its whole scope
        rule_inbox.put_after_capture(in_rule_scope(rule, letters))
    else:
        rule_inbox.put_after_capture(matches(_ageless(rule), letters), _age(rule))
    rule_inbox.put_after_capture(letters.filter(handling__rule_id=rule.pk))


def schedule_ages(rules: list[Rule], letters: QuerySet[DeadLetter]) -> None:
    """Put in, for later, the letters of ``letters`` a rule of ``rules`` will match once they
    are old enough (all else of its match is true now), each due at that moment."""
    now = timezone.now()
    for rule in rules:
        seconds = _age(rule)
        if seconds:
            young = letters.filter(captured_at__gt=now - timedelta(seconds=seconds))
            rule_inbox.put_after_capture(matches(_ageless(rule), young), seconds)


def _age(rule: Rule) -> int | None:
    return (rule.match or {}).get("older_than_seconds")


def _ageless(rule: Rule) -> Rule:
    """``rule`` without its age: what it matches now or will once a letter is old enough."""
    if not _age(rule):
        return rule
    ageless = copy.copy(rule)
    ageless.match = {key: value for key, value in rule.match.items() if key != "older_than_seconds"}
    return ageless
