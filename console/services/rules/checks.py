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
from collections.abc import Mapping, Sequence
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

@dataclass(frozen=True)
class Lot:
    """Letters the check step judges alike: one letter of a round (``ids`` holds it), or a dry
    run's count of letters that share their broker, place, origin and safeguards (counted by
    PostgreSQL, console.services.rules.deciding). ``quarantined`` matters to blocked letters only."""

    count: int
    broker_id: int
    place_id: int
    scope: str
    origin: str
    quarantined: bool = False
    ids: tuple[int, ...] = ()


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
    blocked = {d.letter_id for d in decisions if d.what == "blocked"}
    rows = DeadLetter.objects.filter(id__any=[d.letter_id for d in decisions]).order_by("id").values_list(
        "id", "broker_id", "place_id", "place__scope", "origin_queue", "quarantined_at")
    lots = [Lot(1, broker_id, place_id, scope, origin, quarantined_at is not None, (letter_id,))
            for letter_id, broker_id, place_id, scope, origin, quarantined_at in rows]
    verdict = judge(rule, action, [lot for lot in lots if lot.ids[0] in blocked],
                    [lot for lot in lots if lot.ids[0] not in blocked], actor=actor, topology=topology or Topology())
    checked = Checked(action, refused=[Refused(action, code, reason, [i for lot in refused for i in lot.ids])
                                       for code, reason, refused in verdict.refused])
    if not verdict.run:
        return checked
    if action == "forward":  # a move takes the letters of one broker
        by_broker: dict[int, list[int]] = defaultdict(list)
        for lot in verdict.run:
            by_broker[lot.broker_id] += lot.ids
        checked.batches += [by_broker[broker_id] for broker_id in sorted(by_broker)]
    else:
        checked.batches.append([i for lot in verdict.run for i in lot.ids])
    return checked


@dataclass
class Verdict:
    """What the check step lets run and what it refuses: (code, reason, lots) each."""

    run: list[Lot] = field(default_factory=list)
    refused: list[tuple[str, str, list[Lot]]] = field(default_factory=list)


def judge(rule: Rule, action: str, blocked: list[Lot], lots: list[Lot], *, actor: RuleActor,
          topology: Topology) -> Verdict:
    """The check step (see the module) over ``lots`` of ``rule`` that stand for ``action``, and
    the ``blocked`` ones the safeguards hold back; the same for a round's letters one by one and
    a dry run's counts."""
    verdict = Verdict()
    quarantined = [lot for lot in blocked if lot.quarantined]
    if quarantined:
        verdict.refused.append((QUARANTINED, "quarantined (a replay loop): no rule replays or forwards such a "
                                             "letter until a person releases it", quarantined))
    breaker = [lot for lot in blocked if not lot.quarantined]
    if breaker:
        verdict.refused.append((BREAKER_OPEN, "the breaker of their origin is open: no rule replays or forwards "
                                              "its letters until a person closes it", breaker))
    if not lots or action == "next_rule":  # nothing to do for a next_rule: the next matching rule decides
        verdict.run = lots
        return verdict
    lacking = _not_permitted(actor, action)
    if lacking:
        verdict.refused.append((NOT_PERMITTED, lacking, lots))
        return verdict
    places_scope = scope_of(actor)
    if not places_scope.unlimited:
        outside = [lot for lot in lots if not places_scope.allows(lot.broker_id, lot.place_id)]
        if outside:
            verdict.refused.append((OUT_OF_SCOPE, (
                f"{sum(lot.count for lot in outside)} of the letters are in dead places outside what the rule may "
                "act on (the scope of whoever enabled it, narrowed to the rule's)"), outside))
            lots = [lot for lot in lots if places_scope.allows(lot.broker_id, lot.place_id)]
    if action in ("forward", "retry"):
        lots = _publishable(rule, action, lots, actor, topology, verdict)
    verdict.run = lots
    return verdict


def _queue(rule: Rule, action: str, lot: Lot) -> tuple[int, str, str]:
    """The queue a letter would be published into: the forward's target in its broker and vhost,
    or a retry's origin."""
    return (lot.broker_id, rule.action["target"] if action == "forward" else lot.origin, lot.scope)


def _publishable(rule: Rule, action: str, lots: list[Lot], actor: RuleActor, topology: Topology,
                 verdict: Verdict) -> list[Lot]:
    """The lots whose queue the enabler may publish to; the others refused (each distinct queue asked once)."""
    refusals = queue_refusals(actor, {_queue(rule, action, lot) for lot in lots}, topology=topology)
    if not refusals:
        return lots
    refused: dict[str, list[Lot]] = defaultdict(list)
    kept = []
    for lot in lots:
        refusal = refusals.get(_queue(rule, action, lot))
        if refusal is None:
            kept.append(lot)
        else:
            refused[str(refusal)].append(lot)
    codes = {str(refusal): BROKER_UNREACHABLE if isinstance(refusal, Unconfirmed) else TARGET_REFUSED
             for refusal in refusals.values()}
    for reason, of_reason in refused.items():
        verdict.refused.append((codes[reason], f"{reason} (publishing as whoever enabled the rule)", of_reason))
    return kept


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

def told(rule: Rule, lots: Mapping[str, tuple[list[Lot], list[Lot]]], *, actor: RuleActor) -> dict[str, Any]:
    """The check step over ``rule``'s letters counted per action (blocked lots, the others), as
    a dry run reports it: per action how many letters it takes (``by_action``), how many of
    those would run (``would_run``), and what would be refused (``refused``: action, code, reason
    and count, largest first)."""
    topology = Topology()  # each broker asked once for every action
    by_action: dict[str, int] = {}
    would_run: dict[str, int] = {}
    refused: list[dict[str, Any]] = []
    for action, (blocked, others) in lots.items():
        verdict = judge(rule, action, blocked, others, actor=actor, topology=topology)
        by_action[action] = sum(lot.count for lot in (*blocked, *others))
        would_run[action] = sum(lot.count for lot in verdict.run)
        refused += [{"action": action, "code": code, "reason": reason, "count": sum(lot.count for lot in of_reason)}
                    for code, reason, of_reason in verdict.refused]
    refused.sort(key=lambda r: (-r["count"], r["action"], r["code"], r["reason"]))
    return {"by_action": by_action, "would_run": would_run, "refused": refused}
