"""Which letters a rule matches, and which letters any rule may look at now (held, not held for a
person, not in a rule's unfinished job)."""

from __future__ import annotations

import operator
from collections.abc import Iterator
from contextlib import contextmanager
from functools import reduce

from django.db import connection, transaction
from django.db.models import BooleanField, ExpressionWrapper, Q, QuerySet

from console.models import DeadLetter, Job, LetterState, Rule
from console.services.rules.matches import match_condition


def in_rule_scope(rule: Rule, letters: QuerySet[DeadLetter]) -> QuerySet[DeadLetter]:
    if rule.place_id is not None:
        return letters.filter(place_id=rule.place_id)
    if rule.broker_id is not None:
        return letters.filter(broker_id=rule.broker_id)
    return letters


def matching(rule: Rule, letters: QuerySet[DeadLetter]) -> list[int]:
    """Ids of ``letters`` (in the rule's scope) that its ``match`` takes, in id order."""
    with without_jit():
        return list(matches(rule, letters).order_by("id").values_list("id", flat=True))


@contextmanager
def without_jit() -> Iterator[None]:
    """PostgreSQL's JIT, off for a rule's query: a body path's function makes the planner's
    estimate of a pass over a million letters large enough to compile the query, which took a
    good part of a dry run and saves nothing on a walk the functions dominate (see
    benchmarks/README.md, rules_scale.py)."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL jit = off")
        yield


def matches(rule: Rule, letters: QuerySet[DeadLetter]) -> QuerySet[DeadLetter]:
    """``letters`` (in the rule's scope) that its ``match`` takes: one query, every kind of
    match decided by PostgreSQL (console.services.rules.matches), each free to lead with an index."""
    return in_rule_scope(rule, letters).filter(match_condition(rule.match or {}, alone=True))


def matching_each(rules: list[Rule], letters: QuerySet[DeadLetter]) -> list[set[int]]:
    """For each of ``rules``, the ids of ``letters`` it matches, from one query: one pass over
    the letters for the whole rule set, where a query per rule walked them once per rule (a
    dry run of the tenth rule walked a million letters ten times)."""
    if len(rules) < 2:
        return [set(matching(rule, letters)) for rule in rules]
    conditions = [rule_condition(rule) for rule in rules]
    names = [f"rule_{index}" for index in range(len(rules))]
    rows = letters.filter(reduce(operator.or_, conditions)).annotate(**{
        name: ExpressionWrapper(condition, output_field=BooleanField())
        for name, condition in zip(names, conditions, strict=True)
    }).order_by().values_list("id", *names)
    found: list[set[int]] = [set() for _ in rules]
    with without_jit():
        for letter_id, *taken in rows.iterator(chunk_size=5000):
            for index, yes in enumerate(taken):
                if yes:
                    found[index].add(letter_id)
    return found


def rule_condition(rule: Rule, *, alone: bool = False) -> Q:
    """The rule's scope and ``match`` as one condition on a letter, among the whole rule set's
    in one pass over the letters (:func:`matching_each`); ``alone``: each match kind in its form
    for a pass of its own (a body path's documents found once by their index, not looked up
    per letter: a dry run's earlier rules)."""
    condition = Q(place_id=rule.place_id) if rule.place_id is not None else (
        Q(broker_id=rule.broker_id) if rule.broker_id is not None else Q())
    condition &= match_condition(rule.match or {}, alone=alone)
    return condition if condition else Q(pk__isnull=False)


def handled_elsewhere() -> Q:
    """Letters no rule looks at now: held for a person by a rule, or in a rule's unfinished job."""
    return Q(handling__held=True) | (Q(handling__job__isnull=False) & ~Q(handling__job__status__in=Job.FINISHED))


def open_letters(letters: QuerySet[DeadLetter] | None = None) -> QuerySet[DeadLetter]:
    """Held letters a rule may act on now."""
    qs = DeadLetter.objects.all() if letters is None else letters
    return qs.filter(state=LetterState.HELD).exclude(handled_elsewhere())


def enabled_rules() -> list[Rule]:
    return list(Rule.objects.filter(enabled=True, deleted_at__isnull=True).order_by("position", "id"))
