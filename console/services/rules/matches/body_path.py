"""``body_path``: a value at a path in a JSON body, decided by PostgreSQL on the letter's stored
document (migrations 0035 and 0036)."""

from __future__ import annotations

import json
import math
import operator
import re
from collections.abc import Sequence
from functools import reduce
from typing import Any

from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.models import BooleanField, Exists, Expression, F, OuterRef, Q
from django.db.models.expressions import Combinable
from django.db.models.sql.compiler import SQLCompiler

from console.models import DeadLetter
from console.models.letter import LetterDocument, LetterSearch
from console.services.parsing import unstorable_value
from console.services.rules.matches.base import MatchKind
from console.services.rules.values import RuleError, path_steps


class BodyPath(MatchKind):
    help = 'A JSON body holding a value at a path: {"path": "$.order.status", "value": "paid"}'
    example = {"path": "$.order.status", "value": "paid"}
    schema = {"type": "object", "required": ["path"],
              "properties": {"path": {"type": "string"}, "value": {"description": "Any JSON value"}}}

    def clean(self, value: Any, name: str) -> dict[str, Any]:
        if not isinstance(value, dict) or not value.get("path"):
            raise RuleError(f'{name} is {{"path": "$.a.b", "value": ...}}')
        path_steps(value["path"])
        if problem := unstorable_value(value.get("value")):
            raise RuleError(f"{name}.value {problem}")
        return {"path": value["path"], "value": value.get("value")}

    def check(self, value: Any, name: str) -> None:
        if isinstance(value, dict):
            path_steps(value.get("path"))

    def condition(self, value: Any, *, alone: bool) -> Q:
        return body_path_condition(value["path"], value["value"], joined=alone)


def body_path_condition(path: str, wanted: Any, *, joined: bool = False) -> Q:
    """Letters whose body holds ``wanted`` at ``path`` (the equality of :class:`ValueAtPath`).

    Read from each letter's stored document (LetterDocument, migration 0036): its GIN index
    finds the documents that contain a value equal to ``wanted`` at the path (:func:`_contains`),
    and the match is decided on those documents, no body parsed. A letter a capture has just
    written has no document until its search rows are filled (a ``pending`` search row); its
    body is read instead, as migration 0035 read every body.

    ``joined``: as one set of letter ids the letters are joined with, for a filter on its own
    (a dry run: PostgreSQL starts from the few documents the index finds, where a condition
    under an OR read every held letter; see benchmarks/README.md, rules_scale.py); else per
    letter (EXISTS), for a condition among others over the few letters a round decides."""
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
        if not_yet[PENDING_NAMED:PENDING_NAMED + 1].exists():
            return Q(pk__in=documents.values("letter_id").union(bodies.values("id"), all=True))
        # The few letters without their document yet are read now, so that the documents alone
        # are joined with: PostgreSQL then knows how many the index finds (a union of the two,
        # taken for 200 rows, had it look 333,000 letters up one by one: benchmarks/README.md).
        found = Q(pk__in=documents.values("letter_id"))
        named = list(bodies.values_list("id", flat=True))
        return found | Q(pk__any=named) if named else found
    return Q(Exists(documents.filter(letter_id=OuterRef("pk")))) | (
        Q(Exists(not_yet.filter(letter_id=OuterRef("pk")))) & Q(ValueAtPath(steps, wanted, column="body")))


#: Up to this many letters without their document yet (just captured), a body path alone reads
#: their bodies before its query; past it, its query reads them.
PENDING_NAMED = 10_000


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
    console.letters.bounded_json, never matches. PostgreSQL's jsonb reads a few documents
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
