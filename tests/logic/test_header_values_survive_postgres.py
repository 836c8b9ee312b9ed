"""Any header value a broker can carry is kept in PostgreSQL's JSON and comes back exact:
strings with NUL or lone surrogates, bytes, timestamps, decimals, floats JSON cannot write
(NaN, infinities), nested tables, and table keys that look like our tags."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.db import connection
from hypothesis import given, settings
from hypothesis import strategies as st

from console.letters.values import from_json, to_json

pytestmark = pytest.mark.django_db

scalars = (st.none() | st.booleans() | st.integers(-(2 ** 63), 2 ** 63 - 1) | st.floats(allow_nan=False) | st.text()
           | st.text(alphabet=st.characters(codec=None, categories=None)) | st.binary()
           | st.datetimes(timezones=st.just(UTC)) | st.decimals(allow_nan=False, allow_infinity=False))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.text(alphabet="ab$", max_size=4), inner, max_size=3), max_leaves=8)


def through_postgres(value):
    with connection.cursor() as cursor:
        cursor.execute("SELECT %s::jsonb::text", [json.dumps(to_json(value))])
        (stored,) = cursor.fetchone()
    return from_json(json.loads(stored))


@settings(max_examples=150, deadline=None)
@given(values)
def test_any_header_value_comes_back_exact(value):
    assert through_postgres(value) == value


def test_the_hard_cases_by_name():
    hard = {"nul": "a\x00b", "surrogate": "x\udc80y", "tag-like": {"$bytes": "not bytes"},
            "bytes": b"\x00\xff", "when": datetime(2026, 11, 23, tzinfo=UTC), "amount": Decimal("1.10")}
    assert through_postgres(hard) == hard
    assert math.isnan(through_postgres({"x": float("nan")})["x"])
    assert through_postgres([float("inf"), float("-inf")]) == [float("inf"), float("-inf")]
