"""Which letters a rule matches, and which letters any rule may look at now (held, not held for a
person, not in a rule's unfinished job)."""

from __future__ import annotations

import json
import math
import operator
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from functools import reduce
from typing import Any

from django.db import connection, transaction
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import (
    BooleanField,
    Exists,
    Expression,
    ExpressionWrapper,
    F,
    OuterRef,
    Q,
    QuerySet,
)
from django.db.models.expressions import Combinable
from django.db.models.sql.compiler import SQLCompiler
from django.utils import timezone

from console.models import DeadLetter, Job, LetterState, Rule
from console.models.letter import LetterDocument, LetterSearch
from console.services.rules.spec import path_steps
from console.services.selection import filter_letters


def in_rule_scope(rule: Rule, letters: QuerySet[DeadLetter]) -> QuerySet[DeadLetter]:
    if rule.place_id is not None:
        return letters.filter(place_id=rule.place_id)
    if rule.broker_id is not None:
        return letters.filter(broker_id=rule.broker_id)
    return letters


def matching(rule: Rule, letters: QuerySet[DeadLetter]) -> list[int]:
    """Ids of ``letters`` (in the rule's scope) that its ``match`` takes, in id order."""
    with _without_jit():
        return list(matches(rule, letters).order_by("id").values_list("id", flat=True))


@contextmanager
def _without_jit() -> Iterator[None]:
    """PostgreSQL's JIT, off for a rule's query: a body path's function makes the planner's
    estimate of a pass over a million letters large enough to compile the query, which took
    1.1 s of a 5.2 s dry run and saves nothing on a walk the functions dominate."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL jit = off")
        yield


def matches(rule: Rule, letters: QuerySet[DeadLetter]) -> QuerySet[DeadLetter]:
    """``letters`` (in the rule's scope) that its ``match`` takes: one query, every match kind
    evaluated by PostgreSQL, the body path included (:func:`body_path_condition`)."""
    match = rule.match or {}
    qs = in_rule_scope(rule, letters)
    if "origin" in match:
        qs = filter_letters({"origin": match["origin"]}, qs)
    if "reason" in match:
        qs = qs.filter(reason=match["reason"])
    if "exception_type" in match:
        qs = qs.filter(exception_type__regex=match["exception_type"])
    if "exception_message" in match:
        qs = qs.filter(exception_message__regex=match["exception_message"])
    if "header" in match:
        qs = filter_letters({"header": match["header"]["name"], "header_value": match["header"]["value"]}, qs)
    if "min_deaths" in match:
        qs = qs.filter(death_count__gte=match["min_deaths"])
    if "min_replays" in match:
        qs = qs.filter(replay_count__gte=match["min_replays"])
    if "older_than_seconds" in match:
        qs = qs.filter(captured_at__lte=timezone.now() - timedelta(seconds=match["older_than_seconds"]))
    if "max_size" in match:
        qs = qs.filter(body_size__lte=match["max_size"])
    if "body_path" in match:
        qs = qs.filter(body_path_condition(match["body_path"]["path"], match["body_path"]["value"], joined=True))
    return qs


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
    with _without_jit():
        for letter_id, *taken in rows.iterator(chunk_size=5000):
            for index, yes in enumerate(taken):
                if yes:
                    found[index].add(letter_id)
    return found


def rule_condition(rule: Rule) -> Q:
    """The rule's scope and ``match`` as one condition on a letter, as :func:`matches` filters
    (the header read on the letter itself, with no index to narrow by: a pass over the letters
    reads every row anyway)."""
    match = rule.match or {}
    condition = Q(place_id=rule.place_id) if rule.place_id is not None else (
        Q(broker_id=rule.broker_id) if rule.broker_id is not None else Q())
    if "origin" in match:
        condition &= Q(origin_queue=match["origin"]) | Q(origin_address=match["origin"])
    if "reason" in match:
        condition &= Q(reason=match["reason"])
    if "exception_type" in match:
        condition &= Q(exception_type__regex=match["exception_type"])
    if "exception_message" in match:
        condition &= Q(exception_message__regex=match["exception_message"])
    if "header" in match:
        name, value = match["header"]["name"], match["header"]["value"]
        condition &= Q(headers__contains={name: value}) if value not in (None, "") else Q(headers__has_key=name)
    if "min_deaths" in match:
        condition &= Q(death_count__gte=match["min_deaths"])
    if "min_replays" in match:
        condition &= Q(replay_count__gte=match["min_replays"])
    if "older_than_seconds" in match:
        condition &= Q(captured_at__lte=timezone.now() - timedelta(seconds=match["older_than_seconds"]))
    if "max_size" in match:
        condition &= Q(body_size__lte=match["max_size"])
    if "body_path" in match:
        condition &= body_path_condition(match["body_path"]["path"], match["body_path"]["value"])
    return condition if condition else Q(pk__isnull=False)


def body_path_condition(path: str, wanted: Any, *, joined: bool = False) -> Q:
    """Letters whose body holds ``wanted`` at ``path`` (the equality of :class:`ValueAtPath`).

    Read from each letter's stored document (LetterDocument, migration 0036): its GIN index
    finds the documents that contain a value equal to ``wanted`` at the path (:func:`_contains`),
    and the match is decided on those documents, no body parsed. A letter a capture has just
    written has no document until its search rows are filled (a ``pending`` search row); its
    body is read instead, as migration 0035 read every body.

    ``joined``: as one set of letter ids the letters are joined with, for a filter on its own
    (a dry run: PostgreSQL starts from the few documents the index finds, where a condition
    under an OR read every held letter, 3.4 s at a million); else per letter (EXISTS), for a
    condition among others over the few letters a round decides."""
    steps = path_steps(path)
    documents = LetterDocument.objects.all()
    contains = _contains(steps, wanted)
    if contains is not None:
        documents = documents.filter(contains)
    if contains is None or not _containment_decides(wanted):
        documents = documents.filter(ValueAtPath(steps, wanted, column="document"))
    not_yet = LetterSearch.objects.filter(pending=True)
    if joined:
        bodies = DeadLetter.objects.filter(ValueAtPath(steps, wanted, column="body"),
                                           pk__in=not_yet.values("letter_id"))
        return Q(pk__in=documents.values("letter_id").union(bodies.values("id"), all=True))
    return Q(Exists(documents.filter(letter_id=OuterRef("pk")))) | (
        Q(Exists(not_yet.filter(letter_id=OuterRef("pk")))) & Q(ValueAtPath(steps, wanted, column="body")))


def _contains(steps: list[str | int], wanted: Any) -> Q | None:
    """Documents holding, at ``steps``, a value that may equal ``wanted`` as rules compare
    (:func:`_equal_values`), by containment, which the GIN index answers; None when the path has
    an index (``items[0]``: a list or an object's key "0", which containment cannot say as one)
    or no value can be named."""
    values = _equal_values(wanted)
    if not values or any(isinstance(step, int) for step in steps):
        return None
    documents = []
    for value in values:
        for key in reversed(steps):
            value = {key: value}
        documents.append(Q(document__contains=value))
    return reduce(operator.or_, documents)


def _containment_decides(wanted: Any) -> bool:
    """Whether containment of :func:`_equal_values` at a path of keys is already the rules'
    equality (so the documents the index finds need no further look): for null, true, false,
    numbers (compared by value either way, True as 1) and a string that is neither a number's
    nor null's, true's or false's ``str()``; not for lists and objects (containment is not
    equality) nor for "5" (which 5.0, a document containing 5, does not equal)."""
    if isinstance(wanted, str):
        return wanted not in ("None", "True", "False") and not JSON_NUMBER.fullmatch(wanted)
    return wanted is None or isinstance(wanted, (bool, int, float))


#: A JSON number as JSON writes it (what a wanted string equal to a number's str() looks like).
JSON_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?")


def _equal_values(wanted: Any) -> list[Any] | None:
    """The JSON values a body may hold where a rule wants ``wanted`` (a superset of what
    ``console_py_equals`` takes: jsonb compares numbers by value, so 5 stands for 5.0 too):
    1 and 0 are also true and false, and the other way round; a string is also the number,
    null, true or false whose ``str()`` it is. None when a float is not finite."""
    if isinstance(wanted, bool):
        return [wanted, int(wanted)]
    if isinstance(wanted, (int, float)):
        if not math.isfinite(wanted):
            return None
        return [wanted, *([bool(wanted)] if wanted in (0, 1) else [])]
    if isinstance(wanted, str):
        named = {"None": None, "True": True, "False": False}
        if wanted in named:
            return [wanted, named[wanted]]
        return [wanted, json.loads(wanted)] if JSON_NUMBER.fullmatch(wanted) else [wanted]
    return [wanted]


class ValueAtPath(Expression):
    """Whether ``source`` (a letter's stored document, or its body read as JSON) holds ``wanted``
    at ``steps`` (path_steps()), with the equality rules have always had: ``value == wanted``
    as Python compares what json.loads gives (True == 1, 1 == 1.0), or a scalar whose ``str()``
    is a wanted string ("5" takes 5, "None" takes null, "True" takes true). PostgreSQL decides
    (migration 0035's functions); a body that is not JSON, or is JSON too deep or too large for
    console.brokers.bounded_json, never matches. PostgreSQL's jsonb reads a few documents
    Python's json reads differently: NaN and Infinity, a \\u0000 or a lone surrogate make a body
    not JSON; -0.0 is 0.0; 1e3 is the whole number 1000; numbers compare by their decimal
    value (0.10000000000000001 is not 0.1); lists and objects compare true and 1 as different;
    bodies in UTF-16 or UTF-32 are not read as JSON. A body is read as ``console_body_json``
    reads it, which is what the stored document holds, so both sources give the same answer."""

    conditional = True

    def __init__(self, steps: list[str | int], wanted: Any, *, column: str) -> None:
        super().__init__(output_field=BooleanField())
        self.steps, self.wanted = steps, wanted
        self.source: Any = F(column)  # the column's expression once the query resolves it
        self.from_body = column == "body"

    def get_source_expressions(self) -> list[Any]:
        return [self.source]

    def set_source_expressions(self, exprs: Sequence[Combinable | Expression]) -> None:
        (self.source,) = exprs

    def as_sql(self, compiler: SQLCompiler, connection: BaseDatabaseWrapper) -> tuple[str, tuple[Any, ...]]:
        source, params = compiler.compile(self.source)
        document = f"console_body_json({source})" if self.from_body else source
        keys = [str(step) for step in self.steps]
        indexes = [min(step, MAX_INDEX) if isinstance(step, int) else None for step in self.steps]
        return (f"console_py_equals(console_json_at({document}, %s::text[], %s::integer[]), %s::jsonb)",
                (*params, keys, indexes, json.dumps(self.wanted)))


#: An index past any list's end (PostgreSQL's integer; an 8 MiB document holds fewer items).
MAX_INDEX = 2**31 - 1


def handled_elsewhere() -> Q:
    """Letters no rule looks at now: held for a person by a rule, or in a rule's unfinished job."""
    return Q(handling__held=True) | (Q(handling__job__isnull=False) & ~Q(handling__job__status__in=Job.FINISHED))


def open_letters(letters: QuerySet[DeadLetter] | None = None) -> QuerySet[DeadLetter]:
    """Held letters a rule may act on now."""
    qs = DeadLetter.objects.all() if letters is None else letters
    return qs.filter(state=LetterState.HELD).exclude(handled_elsewhere())


def enabled_rules() -> list[Rule]:
    return list(Rule.objects.filter(enabled=True, deleted_at__isnull=True).order_by("position", "id"))
