"""Handling rules: what a rule is (checked), its versions, which letters it matches, and its
dry run. What a rule does is console.jobs.automation.rules_at_work.

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
    MATCH_KEYS,
    MAX_NUMBER,
    PRESETS,
    THEN,
    RuleError,
    check_patterns,
    clean_action,
    clean_match,
    describe_action,
    ladder_length,
    path_steps,
    step_delay,
)

__all__ = [
    "ACTIONS", "ACTION_PERMISSION", "MATCH_KEYS", "MAX_NUMBER", "PRESETS", "THEN", "Decision", "DryRun", "RuleError",
    "check_patterns", "clean_action", "clean_match", "decide", "describe_action", "do_create_rule", "do_delete_rule",
    "do_disable", "do_enable", "do_update_rule", "dry_run", "enabled_rules", "handled_elsewhere", "handling_of",
    "in_rule_scope", "ladder_length", "lineage_of", "matching", "open_letters", "path_steps", "step_delay",
]
