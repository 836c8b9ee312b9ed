"""The pieces every declared parser of the console is built from (the filter sets of
console.services.filtersets and letter_filters, the keyset pages, the job filters, the door's
middleware and the API's JSON parser): what PostgreSQL can store, and what a number is.

- A number is ASCII digits, and fits in 64 bits. Python's ``int()`` also reads '٣' (Arabic-Indic
  three) and ``str.isdigit()`` says yes to '²', which ``int()`` then refuses: checks written by
  hand with them let through what the next line could not parse, a 500.
- PostgreSQL text (and jsonb) cannot hold NUL, and UTF-8 cannot encode an unpaired surrogate:
  such a value is refused with a 400 where it comes in, not in the database.
- A regular expression is one PostgreSQL runs (``postgres_regex_problem``), not one Python's
  ``re`` compiles: the two dialects differ.

A parser that refuses raises :class:`InputRefused` (a Refusal: 400 on pages and API alike).
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime
from typing import Any

import django_filters
from django import forms
from django.core.validators import ProhibitNullCharactersValidator
from django.db import DataError, OperationalError, connection, transaction
from django.utils.dateparse import parse_date, parse_datetime
from rest_framework import serializers

from console.refusals import Refusal

INT64_MAX = 2**63 - 1
_DIGITS = re.compile(r"[0-9]{1,19}")
_SURROGATE = re.compile("[\ud800-\udfff]")


class InputRefused(Refusal):
    """A query parameter, path, form field or filter that no declared parser accepts."""


def unstorable_text(text: str) -> str:
    """Why PostgreSQL could not hold ``text``, or "" if it can."""
    if "\x00" in text:
        return "holds a NUL character, which PostgreSQL text cannot hold"
    if _SURROGATE.search(text):
        return "holds an unpaired surrogate, which cannot be encoded as UTF-8"
    return ""


def ascii_whole_number(value: Any, lowest: int = 0, highest: int = INT64_MAX) -> int | None:
    """``value`` as an int when it is ASCII digits (a str) or an int within ``lowest..highest``,
    else None. Booleans are not numbers here."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        number = value
    elif isinstance(value, str) and _DIGITS.fullmatch(value):
        number = int(value)
    else:
        return None
    return number if lowest <= number <= highest else None


class WholeNumberField(forms.Field):
    """A whole number written in ASCII digits, from ``min_value`` (default 0) to ``max_value``
    (default the largest bigint): what an id, a cursor, a weekday or an hour is."""

    def __init__(self, *, min_value: int = 0, max_value: int = INT64_MAX, **kwargs: Any) -> None:
        self.min_value, self.max_value = min_value, max_value
        super().__init__(**kwargs)

    def to_python(self, value: Any) -> int | None:
        if value in self.empty_values:
            return None
        number = ascii_whole_number(value.strip() if isinstance(value, str) else value,
                                    self.min_value, self.max_value)
        if number is None:
            if self.max_value == INT64_MAX:
                why = f"must be a whole number (ASCII digits) from {self.min_value}"
            else:
                why = f"must be a whole number from {self.min_value} to {self.max_value}"
            raise forms.ValidationError(f"{why}, got {value!r}", code="invalid")
        return number


class IntegerField(forms.IntegerField):
    """Django's IntegerField for the pages' forms, reading ASCII digits only (and a minus), within
    a bigint unless narrower bounds are given: Django's reads '٣' as 3, through ``int()``."""

    def __init__(self, *, min_value: int | None = -INT64_MAX - 1, max_value: int | None = INT64_MAX,
                 **kwargs: Any) -> None:
        super().__init__(min_value=min_value, max_value=max_value, **kwargs)

    def to_python(self, value: Any) -> int | None:
        if isinstance(value, str) and value.strip() and not re.fullmatch(r"-?[0-9]+", value.strip()):
            raise forms.ValidationError(self.error_messages["invalid"], code="invalid")
        return super().to_python(value)


class ApiIntegerField(serializers.IntegerField):
    """DRF's IntegerField for the API's JSON, reading a string only when it is ASCII digits (and a
    minus, and the ``.0`` DRF allows): DRF's reads '٣' and '²'... through ``int()``, which
    takes every script's digits. A JSON number is read as DRF reads it."""

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, str) and not re.fullmatch(r"\s*-?[0-9]+(\.0*)?\s*", data):
            self.fail("invalid")
        return super().to_internal_value(data)


class TextField(forms.CharField):
    """Text kept as typed (not stripped) that PostgreSQL can store: no NUL, no lone surrogate."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("strip", False)
        super().__init__(**kwargs)
        # Our own message below says why, in the console's words.
        self.validators = [v for v in self.validators if not isinstance(v, ProhibitNullCharactersValidator)]

    def validate(self, value: Any) -> None:
        super().validate(value)
        problem = unstorable_text(value or "")
        if problem:
            raise forms.ValidationError(problem, code="unstorable")


def parse_moment(value: str) -> datetime | None:
    """An ISO 8601 date and time as an aware UTC datetime; None if it is not one, or not one
    PostgreSQL can compare with (its time zone offsets stop short of 16 hours)."""
    try:
        parsed = parse_datetime(value)
        if parsed is None:
            return None
        if parsed.tzinfo is None:
            parsed = parsed.replace(tzinfo=UTC)
        return parsed.astimezone(UTC)
    except (ValueError, OverflowError):
        return None


def _date(value: str) -> date | None:
    try:
        return parse_date(value)
    except ValueError:
        return None


class MomentField(forms.Field):
    """An ISO 8601 date and time, as an aware UTC datetime (see parse_moment)."""

    def to_python(self, value: Any) -> datetime | None:
        if value in self.empty_values:
            return None
        if isinstance(value, datetime):
            return value
        moment = parse_moment(str(value))
        if moment is None and (day := _date(str(value))) is not None:
            moment = datetime.combine(day, datetime.min.time(), tzinfo=UTC)  # a date: its midnight
        if moment is None:
            raise forms.ValidationError(f"must be an ISO 8601 date and time, got {value!r}", code="invalid")
        return moment


class FlagField(forms.Field):
    """Yes or no, read as leniently as links write it: 1, true or yes (any case) is yes, any
    other text no."""

    def to_python(self, value: Any) -> bool | None:
        if value in self.empty_values:
            return None
        return str(value).lower() in ("1", "true", "yes")


class FlagFilter(django_filters.Filter):
    field_class = FlagField


class NumberFilter(django_filters.Filter):
    """A filter on a whole number in ASCII digits (ids, weekday, hour...)."""

    field_class = WholeNumberField


class TextFilter(django_filters.Filter):
    """A filter on text matched exactly as typed."""

    field_class = TextField


class MomentFilter(django_filters.Filter):
    field_class = MomentField


def parsed(filterset: django_filters.FilterSet, error: type[Refusal] = InputRefused) -> django_filters.FilterSet:
    """``filterset`` once its data parsed; ``error`` saying which parameter is wrong and why,
    when one is not (e.g. "weekday must be a whole number from 1 to 7, got '²'")."""
    if filterset.is_bound and not filterset.is_valid():
        raise error("; ".join(f"{name} {' '.join(str(m) for m in messages)}"
                              for name, messages in filterset.errors.items()))
    return filterset


def unstorable_value(value: Any) -> str:
    """Why ``value`` (a JSON-like value: dicts, lists, text, numbers) could not be stored in a
    jsonb column, or "" if it can: a NUL or an unpaired surrogate in any text or key."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif isinstance(item, str) and (problem := unstorable_text(item)):
            return problem
    return ""


#: SQLSTATE classes of a regular expression PostgreSQL refuses: data exception (22: 2201B
#: invalid_regular_expression) and program limit exceeded (54: "too complex").
_REGEX_REFUSALS = ("22", "54")


def postgres_regex_problem(pattern: str) -> str:
    """Why PostgreSQL refuses ``pattern`` as a regular expression (its ``~``), or "" if it runs it.

    Python's ``re`` and PostgreSQL's ARE differ: ``(?P<x>a)`` compiles in Python and is "invalid
    regular expression: quantifier operand invalid" to PostgreSQL, so what only Python checked
    was saved and then failed in every query that used it. PostgreSQL itself is asked, in a
    savepoint, so a refusal leaves the caller's transaction usable."""
    if problem := unstorable_text(pattern):
        return problem
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT '' ~ %s", [pattern])
    except (DataError, OperationalError) as exc:
        if str(getattr(exc.__cause__, "sqlstate", "") or "")[:2] not in _REGEX_REFUSALS:
            raise
        return str(exc).strip().splitlines()[0]
    return ""
