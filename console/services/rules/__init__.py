"""Handling rules: what a rule is (checked), its versions, which letters it matches, and its
dry run. What a rule does is console.jobs.automation.rules_at_work.

A rule's ``match`` holds any of the keys of console.services.rules.matches, one kind of match
each (``origin``, ``reason``, ``exception_type``, ``header``, ``body_path``, ``min_deaths``...).
Its ``action``: ``retry`` along a
``ladder`` of ``{"delay_seconds", "tries"}`` steps (or a ``preset``: "com+" or "wcf") and
``then`` ("next_rule", "hold" or "mark_failed") once the ladder has run out; ``forward`` to a
``target`` queue; ``mark_failed``; ``discard`` (a purge); ``hold`` (for a person).
"""

from __future__ import annotations

from console.services.rules.changes import (
    do_create_rule,
    do_delete_rule,
    do_disable,
    do_enable,
    do_update_rule,
    handling_of,
)
from console.services.rules.deciding import (
    Decision,
    DryRun,
    decide,
    dry_run,
    lineage_of,
)
from console.services.rules.matches import check_match, clean_match
from console.services.rules.matching import (
    enabled_rules,
    handled_elsewhere,
    in_rule_scope,
    matching,
    open_letters,
)
from console.services.rules.spec import (
    ACTION_PERMISSION,
    ACTIONS,
    PRESETS,
    THEN,
    clean_action,
    describe_action,
    ladder_length,
    step_delay,
)
from console.services.rules.values import MAX_NUMBER, RuleError, path_steps

__all__ = [
    "ACTIONS", "ACTION_PERMISSION", "MAX_NUMBER", "PRESETS", "THEN", "Decision", "DryRun", "RuleError",
    "check_match", "clean_action", "clean_match", "decide", "describe_action", "do_create_rule", "do_delete_rule",
    "do_disable", "do_enable", "do_update_rule", "dry_run", "enabled_rules", "handled_elsewhere", "handling_of",
    "in_rule_scope", "ladder_length", "lineage_of", "matching", "open_letters", "path_steps", "step_delay",
]
