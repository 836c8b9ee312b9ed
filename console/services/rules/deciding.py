"""What the rules would do: first match wins, a retry counts its lineage's tries, a blocked
letter stays held (:func:`decide`); the dry run is the same code over what its reader may see."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.contrib.postgres.aggregates import ArrayAgg
from django.contrib.postgres.fields import ArrayField
from django.db import connection
from django.db.models import (
    BigIntegerField,
    BooleanField,
    Case,
    CharField,
    Count,
    Exists,
    ExpressionWrapper,
    F,
    Func,
    IntegerField,
    JSONField,
    OuterRef,
    Q,
    QuerySet,
    Value,
    When,
)
from django.db.models.functions import Coalesce
from django.utils import timezone

from console.access.actors import Actor
from console.access.scope import visible
from console.models import DeadLetter, LetterHandling, Rule, RuleInbox
from console.services.rules.checks import Lot, rule_actor, told
from console.services.rules.matches import check_match
from console.services.rules.matching import (
    enabled_rules,
    matches,
    matching_each,
    open_letters,
    rule_condition,
    without_jit,
)
from console.services.rules.spec import ladder_length, step_delay
from console.services.safeguards import held_back_from_rules, rules_may_replay


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


def decide(rules: list[Rule], letters: QuerySet[DeadLetter]) -> list[Decision]:
    """First match wins, in the order given: for each of ``letters``, what the first rule that
    matches it does. A retry counts the tries its lineage had on the same rule (a letter that
    came back takes its parent's count on); a rule whose ladder ran out for the lineage is
    passed over. The rules' runs (console.jobs.automation.rules_at_work) use this; the dry run
    decides the same in one query (:func:`decided`)."""
    matched = list(zip(rules, matching_each(rules, letters), strict=True))
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
    would happen to them, as :func:`decide` would decide each, and the check step a round runs
    before asking for each job (console.services.rules.checks) says what would run and what
    would be refused, and why, with the rights of ``enabler``: by default whoever enabled the
    rule, or ``reader`` for a draft (who would enable it).

    Counted by PostgreSQL: the letters are decided in one query (:func:`decided`) and counted
    per action, broker, place, origin and safeguard; the check step judges those counts, each
    distinct target once. Python sees the sample only (at a million held letters, deciding each
    letter in Python took 10 s for a rule matching nearly all of them)."""
    earlier = [r for r in enabled_rules() if (r.position, r.pk) < (rule.position, rule.pk or 0) and r.pk != rule.pk]
    for each in (*earlier, rule):
        check_match(each)
    mine = decided(rule, earlier, visible(reader, open_letters()))
    lots: dict[str, tuple[list[Lot], list[Lot]]] = {}
    with without_jit(), connection.cursor() as cursor:
        # One pass (a second, for the sample in id order, walked every letter of a narrow rule),
        # counted by hashing: an aggregate in id order would sort every letter first.
        # The few groups always fit in memory, which PostgreSQL, misled by its estimate of what
        # the earlier rules take (thousands of letters, not 900,000), did not see: it sorted them.
        cursor.execute("SET LOCAL work_mem = '64MB'")
        cursor.execute("SET LOCAL enable_sort = off")
        counted = list(mine.values_list(  # type: ignore[misc]  # the plugin does not see decided()'s annotations
            "what", "quarantined", "broker_id", "place_id", "place__scope", "origin_queue",
        ).annotate(first=FirstIds(ArrayAgg("id")), n=Count("id")).order_by())
    sample = sorted(letter_id for row in counted for letter_id in row[-2])[:SAMPLE]
    for what, quarantined, broker_id, place_id, scope, origin, _, count in counted:
        blocked, others = lots.setdefault(rule.action["kind"] if what == "blocked" else what, ([], []))
        (blocked if what == "blocked" else others).append(Lot(count, broker_id, place_id, scope, origin, quarantined))
    if enabler is None:
        enabler = rule.enabled_by if rule.enabled and rule.enabled_by_id else reader
    checked = told(rule, lots, actor=rule_actor(rule, enabler))
    return DryRun(matched=sum(row[-1] for row in counted), by_action=checked["by_action"],
                  would_run=checked["would_run"], refused=checked["refused"], sample=sample)


class FirstIds(Func):
    """The first ``SAMPLE`` items of an array (some of a group's ids, for a dry run's sample)."""

    template = f"(%(expressions)s)[1:{SAMPLE}]"
    output_field = ArrayField(BigIntegerField())


#: Up to this many letters due in the rules' inbox, :func:`open_to_earlier_rules` names them (a
#: set PostgreSQL hashes); past it (a rule set just changed), every letter is asked.
INBOX_ASKED = 20_000


def open_to_earlier_rules(held_back: Q) -> Q | None:
    """The open letters an enabled rule may take now: those the rounds have yet to decide (the
    rules' inbox rows due now: console.services.rule_inbox) and those ``held_back`` from the rules
    (quarantined, or their breaker open: a rule that took them waits). Every other open letter
    was decided by the enabled rules, and none takes it now: a rule that takes a letter leaves it
    held for a person or in its job, or, its action refused, in the inbox again; a change of the
    rule set, or of the letter, puts it in due now; a row due later was put there by a round for
    the age or the next try a rule waits for, and none takes it before. So a dry run asks the
    earlier rules about these letters only, where asking them of a million held letters took most
    of its time. None when more than :data:`INBOX_ASKED` are due."""
    # In due order: one probe of the due_at index, as a round's take (the statistics may count
    # every row due, and a plain scan of a million rows due later costs 80 ms).
    due = list(RuleInbox.objects.filter(due_at__lte=timezone.now()).order_by("due_at").values_list(
        "letter_id", flat=True)[:INBOX_ASKED + 1])
    if len(due) > INBOX_ASKED:
        return None
    # Named, not a subquery: PostgreSQL's estimate of the rows due (its statistics, taken when
    # a rule set had just changed) had it read the whole inbox.
    return Q(pk__any=due) | held_back


def decided(rule: Rule, earlier: list[Rule], letters: QuerySet[DeadLetter]) -> QuerySet[DeadLetter]:
    """The ``letters`` that ``rule`` would take after the ``earlier`` rules, each with ``what``
    it does (:func:`decide`'s words) and whether it is ``quarantined``: :func:`decide` as one
    query. A letter's lineage is its own handling, else its parent's; an earlier rule takes a
    letter it matches unless its ladder ran out for the lineage (``ran_out``), or ran out with
    ``then: next_rule``; this rule passes over a letter whose lineage its ladder ran out for."""
    own = Q(handling__letter_id__isnull=False)

    def lineage(name: str, default: Any, field: Any) -> Coalesce:
        return Coalesce(Case(When(own, then=F(f"handling__{name}")), default=F(f"parent__handling__{name}"),
                             output_field=field), Value(default, output_field=field))

    letters = matches(rule, letters).annotate(
        lineage_rule=lineage("rule_id", 0, IntegerField()), lineage_tries=lineage("tries", 0, IntegerField()),
        lineage_ran_out=lineage("ran_out", [], JSONField()))

    def ladder_ran_out(each: Rule) -> Q:
        return Q(lineage_rule=each.pk or 0, lineage_tries__gte=ladder_length(each.action))

    held_back = held_back_from_rules()
    taken_before = Q()
    for index, each in enumerate(earlier):
        takes = rule_condition(each, alone=True) & ~Q(lineage_ran_out__contains=[each.pk])
        if each.action["kind"] == "retry" and each.action.get("then") == "next_rule":
            takes &= ~ladder_ran_out(each)
        name = f"earlier_{index}"
        # A condition PostgreSQL finds unknown (NULL) does not take the letter, as in decide().
        letters = letters.annotate(**{name: Coalesce(ExpressionWrapper(takes, output_field=BooleanField()),
                                                     Value(False))})
        taken_before |= Q(**{name: True})
    if earlier:
        asked = open_to_earlier_rules(held_back)
        letters = letters.exclude(taken_before if asked is None else asked & taken_before)
    if rule.pk is not None:
        letters = letters.exclude(lineage_ran_out__contains=[rule.pk])  # type: ignore[misc]  # a JSON list
    kind = rule.action["kind"]
    if kind == "retry":
        what: Any = Case(When(ladder_ran_out(rule), then=Value(rule.action["then"])),
                         When(held_back, then=Value("blocked")), default=Value("retry"))
    elif kind == "forward":
        what = Case(When(held_back, then=Value("blocked")), default=Value("forward"))
    else:
        what = Value(kind)
    return letters.annotate(what=ExpressionWrapper(what, output_field=CharField()),
                            quarantined=ExpressionWrapper(Q(quarantined_at__isnull=False),
                                                          output_field=BooleanField()))
