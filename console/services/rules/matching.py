"""Which letters a rule matches, and which letters any rule may look at now (held, not held for a
person, not in a rule's unfinished job)."""

from __future__ import annotations

import json
import operator
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from functools import reduce
from typing import Any

from django.db import connection, transaction
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
from django.utils import timezone

from console.models import DeadLetter, LetterState, Rule
from console.models.letter import LetterSearch
from console.services.letter_filters import escaped
from console.services.rules.spec import path_steps
from console.services.selection import filter_letters


def in_rule_scope(rule: Rule, letters: QuerySet) -> QuerySet:
    if rule.place_id is not None:
        return letters.filter(place_id=rule.place_id)
    if rule.broker_id is not None:
        return letters.filter(broker_id=rule.broker_id)
    return letters


def matching(rule: Rule, letters: QuerySet) -> list[int]:
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


def matches(rule: Rule, letters: QuerySet) -> QuerySet:
    """``letters`` (in the rule's scope) that its ``match`` takes: one query, every match kind
    evaluated by PostgreSQL, the body path included (:class:`BodyPathMatches`)."""
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
        qs = qs.filter(body_path_condition(match["body_path"]["path"], match["body_path"]["value"]))
    return qs


def matching_each(rules: list[Rule], letters: QuerySet) -> list[set[int]]:
    """For each of ``rules``, the ids of ``letters`` it matches, from one query: one pass over
    the letters for the whole rule set, where a query per rule walked them once per rule (a
    dry run of the tenth rule walked a million letters ten times)."""
    if len(rules) < 2:
        return [set(matching(rule, letters)) for rule in rules]
    conditions = [rule_condition(rule) for rule in rules]
    names = [f"rule_{index}" for index in range(len(rules))]
    rows = letters.filter(reduce(operator.or_, conditions)).annotate(**{
        name: ExpressionWrapper(condition, output_field=BooleanField()) for name, condition in zip(names, conditions)
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


def body_path_condition(path: str, wanted: Any) -> Q:
    """Letters whose body holds ``wanted`` at ``path`` (:class:`BodyPathMatches`). When a match
    must show an int's digits (three or more: _needle), the trigram index of the letters' search
    text (LetterSearch, as the ``q`` filter uses it) first narrows the letters to those that may
    hold them, and a body longer than the search text keeps (``partial``) stays a candidate: at
    a million letters a dry run then reads a few bodies, not every one (1.2 s to 21 ms for an
    order number). A string may be written with escapes (``\\u00e9``), which the search text does
    not undo, so strings are matched by the body itself (2.5 s at a million for a rare value; a
    common one, matched by many letters, is parsed in each of them)."""
    condition = Q(BodyPathMatches(path_steps(path), wanted))
    needle = _needle(wanted)
    if needle is None or not isinstance(wanted, int) or len(needle) < TRIGRAM:
        return condition
    may_hold = Q(text__contains=escaped(needle)) | Q(partial=True)
    return Q(Exists(LetterSearch.objects.filter(may_hold, letter_id=OuterRef("pk")))) & condition


#: The shortest needle the trigram index narrows by (pg_trgm reads three characters at a time).
TRIGRAM = 3


class BodyPathMatches(Expression):
    """Whether a letter's body, read as JSON, holds ``wanted`` at ``steps`` (path_steps()), with
    the equality rules have always had: ``value == wanted`` as Python compares what json.loads
    gives (True == 1, 1 == 1.0), or a scalar whose ``str()`` is a wanted string ("5" takes 5,
    "None" takes null, "True" takes true). PostgreSQL decides (migration 0035's functions); a
    body that is not JSON, or is JSON too deep or too large for console.brokers.bounded_json,
    never matches. PostgreSQL's jsonb reads a few documents Python's json reads differently:
    NaN and Infinity, a \\u0000 or a lone surrogate make a body not JSON; -0.0 is 0.0; 1e3 is the
    whole number 1000, and an int is found only written with its digits (123, 123.0; see
    _needle); numbers compare by their decimal value (0.10000000000000001 is not 0.1); lists
    and objects compare true and 1 as different; bodies in UTF-16 or UTF-32 are not read as JSON.

    A wanted string that JSON writes without escapes must appear in the body's bytes, or the
    body must hold an escape: that cheap test spares parsing bodies that cannot match."""

    conditional = True

    def __init__(self, steps: list[str | int], wanted: Any) -> None:
        super().__init__(output_field=BooleanField())
        self.steps, self.wanted, self.body = steps, wanted, F("body")

    def get_source_expressions(self):
        return [self.body]

    def set_source_expressions(self, exprs):
        (self.body,) = exprs

    def as_sql(self, compiler, connection):
        body, body_params = compiler.compile(self.body)
        keys = [str(step) for step in self.steps]
        indexes = [min(step, MAX_INDEX) if isinstance(step, int) else None for step in self.steps]
        sql = (f"console_py_equals(console_json_at(console_body_json({body}), %s::text[], %s::integer[]), "
               f"%s::jsonb)")
        params = [*body_params, keys, indexes, json.dumps(self.wanted)]
        needle = _needle(self.wanted)
        if needle is None:
            return sql, params
        if isinstance(self.wanted, int):  # digits have no escapes
            return f"(position(%s::bytea IN {body}) > 0 AND {sql})", [needle, *body_params, *params]
        return (f"((position(%s::bytea IN {body}) > 0 OR position('\\\\'::bytea IN {body}) > 0) AND {sql})",
                [needle, *body_params, *body_params, *params])


#: An index past any list's end (PostgreSQL's integer; an 8 MiB document holds fewer items).
MAX_INDEX = 2**31 - 1


def _needle(wanted: Any) -> bytes | None:
    """Bytes a body must hold to have ``wanted`` at some path: a string JSON writes as it is
    (unless the body holds a backslash, an escape), an int's digits (as 123 or 123.0; a number
    in exponent form, 1.23e2, is not found by an int); None when a match need not show
    ``wanted`` (a float, 0 or 1, which true and false equal, "None", "True", "False")."""
    if isinstance(wanted, int) and not isinstance(wanted, bool):
        return str(abs(wanted)).encode() if abs(wanted) > 1 else None
    if not isinstance(wanted, str) or not wanted or wanted in ("None", "True", "False"):
        return None
    if any(char in '"\\' or ord(char) < 0x20 for char in wanted):
        return None
    try:
        float(wanted)
    except ValueError:
        return wanted.encode("utf-8", "surrogatepass")
    return wanted.encode() if wanted.isascii() and wanted.lstrip("-").isdigit() else None


def handled_elsewhere() -> Q:
    """Letters no rule looks at now: held for a person by a rule, or in a rule's unfinished job."""
    from console.models import Job

    return Q(handling__held=True) | (Q(handling__job__isnull=False) & ~Q(handling__job__status__in=Job.FINISHED))


def open_letters(letters: QuerySet | None = None) -> QuerySet:
    """Held letters a rule may act on now."""
    qs = DeadLetter.objects.all() if letters is None else letters
    return qs.filter(state=LetterState.HELD).exclude(handled_elsewhere())


def enabled_rules() -> list[Rule]:
    return list(Rule.objects.filter(enabled=True, deleted_at__isnull=True).order_by("position", "id"))
