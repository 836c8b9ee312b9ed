"""What the rules would do: first match wins, a retry counts its lineage's tries, a blocked
letter stays held (:func:`decide`); the dry run is the same code over what its reader may see."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.db.models import Exists, OuterRef, QuerySet

from console.access.actors import Actor
from console.access.scope import visible
from console.models import DeadLetter, LetterHandling, Rule
from console.services.rules.checks import rule_actor, told
from console.services.rules.matches import check_match
from console.services.rules.matching import (
    enabled_rules,
    matching,
    matching_each,
    open_letters,
)
from console.services.rules.spec import ladder_length, step_delay
from console.services.safeguards import rules_may_replay


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


#: The actions that publish a letter again (blocked by quarantine or an open breaker).
REPLAYING = ("retry", "forward")


@dataclass
class _Lineage:
    rule_id: int | None = None
    tries: int = 0
    ran_out: tuple[int, ...] = ()


def decide(rules: list[Rule], letters: QuerySet[DeadLetter], *, last_takes: set[int] | None = None) -> list[Decision]:
    """First match wins, in the order given: for each of ``letters``, what the first rule that
    matches it does. A retry counts the tries its lineage had on the same rule (a letter that
    came back takes its parent's count on); a rule whose ladder ran out for the lineage is
    passed over. The dry run and the rules' runs (console.jobs.automation.rules_at_work) both use this.
    ``last_takes``: the letters the last rule matches, when the caller knows them (a dry run's
    letters are its rule's), so only the earlier rules are matched here."""
    if last_takes is None:
        matched = list(zip(rules, matching_each(rules, letters), strict=True))
    else:
        matched = [*zip(rules[:-1], matching_each(rules[:-1], letters), strict=True), (rules[-1], last_takes)]
    ids = set().union(*(found for _, found in matched)) if matched else set()
    if not ids:
        return []
    lineage = lineage_of(ids)
    # Whether a letter may be replayed, and when it was captured, matter to the letters of the
    # rules that replay (at a million held letters, reading them for the 333,716 letters of a
    # rule that holds took seconds of its dry run).
    replaying = set().union(*(found for rule, found in matched if rule.action["kind"] in REPLAYING))
    may_replay = rules_may_replay(DeadLetter.objects.filter(pk=OuterRef("pk")))
    captured, replayable = {}, set()
    for letter_id, captured_at, yes in DeadLetter.objects.filter(id__any=replaying).values_list(
            "id", "captured_at", Exists(may_replay)):
        captured[letter_id] = captured_at
        if yes:
            replayable.add(letter_id)
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
    parents = dict(DeadLetter.objects.filter(id__any=ids, parent__isnull=False).values_list("id", "parent_id"))
    rows = {row["letter_id"]: row for row in LetterHandling.objects.filter(
        letter_id__any=ids | set(parents.values())).values("letter_id", "rule_id", "tries", "ran_out")}
    found = {}
    for letter_id in ids:
        row = rows.get(letter_id)
        if row is None and letter_id in parents:
            row = rows.get(parents[letter_id])
        if row is not None:
            found[letter_id] = _Lineage(row["rule_id"], row["tries"], tuple(row["ran_out"] or ()))
    return found



#: How many letter ids a dry run shows.
SAMPLE = 20


@dataclass
class DryRun:
    """``by_action``: letters per action the rule takes; ``would_run``: how many of those would
    run; ``refused``: the rest, per action and reason (console.services.rules.checks)."""

    matched: int = 0
    by_action: dict[str, int] = field(default_factory=dict)
    sample: list[int] = field(default_factory=list)
    would_run: dict[str, int] = field(default_factory=dict)
    refused: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {"matched": self.matched, "by_action": self.by_action, "would_run": self.would_run,
                "refused": self.refused, "sample": self.sample}

    @property
    def runs(self) -> int:
        return sum(self.would_run.values())


def dry_run(rule: Rule, *, reader: Actor, enabler: Any = None) -> DryRun:
    """What ``rule`` would do now to the held letters ``reader`` may see, were it enabled at its
    position: letters an enabled rule before it takes are not counted. ``by_action`` says what
    would happen to each (:func:`decide`, the same code the enabled rule runs), and the check
    step a round runs before asking for each job (console.services.rules.checks) says what
    would run and what would be refused, and why, with the rights of ``enabler``: by default
    whoever enabled the rule, or ``reader`` for a draft (who would enable it)."""
    earlier = [r for r in enabled_rules() if (r.position, r.pk) < (rule.position, rule.pk or 0) and r.pk != rule.pk]
    for each in (*earlier, rule):
        check_match(each)
    letters = visible(reader, open_letters())
    # Only what this rule matches can be its: the earlier rules are asked about those letters
    # alone (at a million held letters, one pass for the whole rule set took seconds per rule).
    taken = set(matching(rule, letters))
    decisions = decide([*earlier, rule], letters.filter(pk__any=taken), last_takes=taken)
    mine = [d for d in decisions if d.rule.pk == rule.pk]
    result = DryRun(matched=len({d.letter_id for d in mine}))
    if enabler is None:
        enabler = rule.enabled_by if rule.enabled and rule.enabled_by_id else reader
    checked = told(rule, mine, actor=rule_actor(rule, enabler))
    result.by_action, result.would_run, result.refused = (checked["by_action"], checked["would_run"],
                                                          checked["refused"])
    result.sample = sorted({d.letter_id for d in mine})[:SAMPLE]
    return result
