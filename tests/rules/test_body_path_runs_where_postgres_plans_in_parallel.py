"""A body path is matched however PostgreSQL plans the query. Its JSON reader (migration 0035's
``console_body_json``) catches what is not JSON in an exception block, a subtransaction, which
neither a parallel worker nor the leader gathering them may start: marked PARALLEL RESTRICTED,
a dry run over a table large enough for a parallel scan failed ("cannot start subtransactions
during a parallel operation", seen at a million letters). Here parallel plans are made cheap,
so PostgreSQL would choose one if the function allowed it."""

from __future__ import annotations

import json

import pytest
from django.db import connection, transaction

from console.models import DeadLetter, Rule
from console.services.rules import matching
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


def _force_parallel() -> str:
    """PostgreSQL 16 renamed force_parallel_mode to debug_parallel_query."""
    return "debug_parallel_query" if connection.pg_version >= 160000 else "force_parallel_mode"


def test_a_body_path_is_matched_when_parallel_plans_are_cheap(memory_broker):
    place = memory_place(memory_broker)
    wanted = [store_letter(place, json.dumps({"currency": "CHF", "n": n}).encode()).pk for n in range(3)]
    for n in range(40):
        store_letter(place, b"not json" if n % 2 else json.dumps({"currency": "EUR", "n": n}).encode())
    rule = Rule(name="chf", match={"body_path": {"path": "$.currency", "value": "CHF"}}, action={"kind": "hold"})
    force_parallel = _force_parallel()
    with transaction.atomic(), connection.cursor() as cursor:
        for setting in ("parallel_setup_cost = 0", "parallel_tuple_cost = 0", "min_parallel_table_scan_size = 0",
                        "min_parallel_index_scan_size = 0", "max_parallel_workers_per_gather = 2",
                        f"{force_parallel} = on"):
            cursor.execute(f"SET LOCAL {setting}")
        found = matching(rule, DeadLetter.objects.all())
    assert sorted(found) == wanted
