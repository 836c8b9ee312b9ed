"""The check step of a rule's action, shared by a round (console.jobs.automation.rules_at_work._act, before it asks
the one door for a job) and the dry run (console.services.rules.deciding.dry_run, which reports
it): so a dry run says what the rule would do and what would be refused, and why (invariant 10).

For one action of one rule over the letters it decided, in order:

1. **Safeguards.** A quarantined letter, or one whose origin's breaker is open, is neither
   replayed nor forwarded (decide() leaves it "blocked"; here it is told which). These are
   waits, not faults of the rule: the letter is taken once a person releases it or closes the
   breaker.
2. **Permission.** The enabler must hold the right of the action's job kind (a discard: an
   admin's), as request_job asks (console.access.roles).
3. **Places.** The letters must lie in the rule's scope: its enabler's, narrowed to the rule's.
4. **Where it publishes.** A forward's target (in each broker and vhost of its letters) and a
   retry's letters' origins must be where the enabler may publish, as the broker's topology
   confirms (console.access.guards.queue_refusals): a rule's scope chooses its letters, never
   where it may publish. A broker that cannot be asked refuses for now ("broker unreachable").
5. **The job kind's own.** A move takes letters of one broker at a time: a forward runs one job
   per broker.

What passes is cut into batches, one job each (one note for a hold).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from console.access.actors import RuleActor
from console.access.guards import Unconfirmed, queue_refusals
from console.access.roles import has, role_holding
from console.access.scope import scope_of
from console.access.topology import Topology
from console.models import DeadLetter, Rule
from console.services.rules.spec import ACTION_PERMISSION

#: action -> the job kind it asks for (a hold asks for none: it is noted on the letters).
JOB_KINDS = {"retry": "replay", "forward": "move", "mark_failed": "mark_failed", "discard": "purge"}

#: Why a letter is refused: the codes a dry run and the API name.
QUARANTINED, BREAKER_OPEN = "quarantined", "breaker_open"
NOT_PERMITTED, OUT_OF_SCOPE, TARGET_REFUSED, BROKER_UNREACHABLE = (
    "not_permitted", "out_of_scope", "target_refused", "broker_unreachable")
CODES = (QUARANTINED, BREAKER_OPEN, NOT_PERMITTED, OUT_OF_SCOPE, TARGET_REFUSED, BROKER_UNREACHABLE)
#: Refusals that are the safeguards holding letters back, not the rule failing.
SAFEGUARDS = frozenset({QUARANTINED, BREAKER_OPEN})

#: A letter as the check step reads it: id, broker id, place id, the place's scope, origin queue.
Row = tuple[int, int, int, str, str]


class Decided(Protocol):
    """What the check step reads of a decision (console.services.rules.deciding.Decision)."""

    letter_id: int
    what: str


@dataclass
class Refused:
    """Letters of one action refused for one reason (``code`` made by code, ``reason`` in words)."""

    action: str
    code: str
    reason: str
    letter_ids: list[int]


@dataclass
class Checked:
    """What the check step lets run (``batches``, one job each) and what it refuses."""

    action: str
    batches: list[list[int]] = field(default_factory=list)
    refused: list[Refused] = field(default_factory=list)

    @property
    def runs(self) -> int:
        return sum(len(batch) for batch in self.batches)

    def failures(self) -> list[Refused]:
        """The refusals that are the rule's own failing (not the safeguards' waits)."""
        return [refused for refused in self.refused if refused.code not in SAFEGUARDS]


def rule_actor(rule: Rule, enabler: Any = None) -> RuleActor:
    """The actor of what ``rule`` does: ``rule:<name>@v<n>`` with the rights of ``enabler``
    (by default whoever enabled it)."""
    return RuleActor(rule.name, rule.version, user=enabler if enabler is not None else rule.enabled_by,
                     broker_id=rule.broker_id, place_id=rule.place_id)


def action_of(rule: Rule, decision: Decided) -> str:
    """The action a decision stands for: a "blocked" letter is one the rule would retry or forward."""
    action: str = rule.action["kind"] if decision.what == "blocked" else decision.what
    return action


def check(rule: Rule, action: str, decisions: Sequence[Decided], *, actor: RuleActor,
          topology: Topology | None = None) -> Checked:
    """The check step (see the module) for ``decisions`` of ``rule`` that all stand for ``action``."""
    checked = Checked(action)
    blocked = sorted(d.letter_id for d in decisions if d.what == "blocked")
    if blocked:
        checked.refused += _safeguarded(action, blocked)
    ids = sorted(d.letter_id for d in decisions if d.what != "blocked")
    if not ids:
        return checked
    if action == "next_rule":  # nothing to do here: the next matching rule decides
        checked.batches.append(ids)
        return checked
    lacking = _not_permitted(actor, action)
    if lacking:
        checked.refused.append(Refused(action, NOT_PERMITTED, lacking, ids))
        return checked
    places_scope = scope_of(actor)
    publishes = action in ("forward", "retry")
    if places_scope.unlimited and not publishes:
        checked.batches.append(ids)
        return checked
    rows = list(DeadLetter.objects.filter(id__any=ids).order_by("id")
                .values_list("id", "broker_id", "place_id", "place__scope", "origin_queue"))
    if not places_scope.unlimited:
        outside = [row[0] for row in rows if not places_scope.allows(row[1], row[2])]
        if outside:
            checked.refused.append(Refused(action, OUT_OF_SCOPE, (
                f"{len(outside)} of the letters are in dead places outside what the rule may act on (the scope of "
                "whoever enabled it, narrowed to the rule's)"), outside))
            rows = [row for row in rows if places_scope.allows(row[1], row[2])]
    if publishes:
        rows = _publishable(rule, action, rows, actor, topology or Topology(), checked)
    if not rows:
        return checked
    if action == "forward":
        by_broker: dict[int, list[int]] = defaultdict(list)
        for row in rows:
            by_broker[row[1]].append(row[0])
        checked.batches += [by_broker[broker_id] for broker_id in sorted(by_broker)]
    else:
        checked.batches.append([row[0] for row in rows])
    return checked


def _queue(rule: Rule, action: str, row: Row) -> tuple[int, str, str]:
    """The queue a letter would be published into: the forward's target in its broker and vhost,
    or a retry's origin."""
    _, broker_id, _, place_scope, origin = row
    return (broker_id, rule.action["target"] if action == "forward" else origin, place_scope)


def _publishable(rule: Rule, action: str, rows: list[Row], actor: RuleActor, topology: Topology,
                 checked: Checked) -> list[Row]:
    refusals = queue_refusals(actor, {_queue(rule, action, row) for row in rows}, topology=topology)
    if not refusals:
        return rows
    refused: dict[str, list[int]] = defaultdict(list)
    kept = []
    for row in rows:
        refusal = refusals.get(_queue(rule, action, row))
        if refusal is None:
            kept.append(row)
        else:
            refused[str(refusal)].append(row[0])
    codes = {str(refusal): BROKER_UNREACHABLE if isinstance(refusal, Unconfirmed) else TARGET_REFUSED
             for refusal in refusals.values()}
    for reason, letter_ids in refused.items():
        checked.refused.append(Refused(action, codes[reason], f"{reason} (publishing as whoever enabled the rule)",
                                       letter_ids))
    return kept


def _safeguarded(action: str, ids: list[int]) -> list[Refused]:
    quarantined = set(DeadLetter.objects.filter(id__any=ids, quarantined_at__isnull=False)
                      .values_list("id", flat=True))
    found = []
    if quarantined:
        found.append(Refused(action, QUARANTINED, "quarantined (a replay loop): no rule replays or forwards such a "
                                                  "letter until a person releases it", sorted(quarantined)))
    rest = [letter_id for letter_id in ids if letter_id not in quarantined]
    if rest:
        found.append(Refused(action, BREAKER_OPEN, "the breaker of their origin is open: no rule replays or forwards "
                                                   "its letters until a person closes it", rest))
    return found


def _not_permitted(actor: RuleActor, action: str) -> str:
    """Why the rule's enabler may not have this action done ("" when they may)."""
    needed = ACTION_PERMISSION[action]
    if actor.user is None:
        return "the rule has no enabler: it acts with the rights of whoever enables it"
    if has(actor, needed):
        return ""
    kind = JOB_KINDS.get(action, action).replace("_", " ")
    return f"a {kind} needs the {role_holding(needed)} role, which {actor.user} who enabled the rule does not hold"


# -- what a dry run reports ------------------------------------------------------------------

def told(rule: Rule, decisions: Sequence[Decided], *, actor: RuleActor) -> dict[str, Any]:
    """The check step over ``rule``'s decisions, as a dry run reports it: per action how many
    letters it takes (``by_action``), how many of those would run (``would_run``), and what would
    be refused (``refused``: action, code, reason and count, largest first)."""
    grouped: dict[str, list[Decided]] = defaultdict(list)
    for decision in decisions:
        grouped[action_of(rule, decision)].append(decision)
    topology = Topology()  # each broker asked once for every action
    by_action: dict[str, int] = {}
    would_run: dict[str, int] = {}
    refused: list[dict[str, Any]] = []
    for action, group in grouped.items():
        checked = check(rule, action, group, actor=actor, topology=topology)
        by_action[action], would_run[action] = len(group), checked.runs
        refused += [{"action": action, "code": r.code, "reason": r.reason, "count": len(r.letter_ids)}
                    for r in checked.refused]
    refused.sort(key=lambda r: (-r["count"], r["action"], r["code"], r["reason"]))
    return {"by_action": by_action, "would_run": would_run, "refused": refused}
