"""Deciding letters matches the whole rule set in one query (issue 29: a dry run of the tenth
enabled rule walked a million letters ten times, once per rule), and each rule takes exactly
the letters its own query takes, for every match kind."""

from __future__ import annotations

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from console.models import DeadLetter, Rule
from console.services.rules import matches as match_kinds
from console.services.rules.matching import matching, matching_each
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


def test_every_match_kind_in_one_query_as_each_rule_alone(memory_broker):
    place = memory_place(memory_broker)
    other = memory_place(memory_broker, origin="billing")
    for n in range(12):
        store_letter(place if n % 3 else other,
                     json.dumps({"order": {"status": ["paid", "open"][n % 2], "n": n}}).encode(),
                     headers={"tenant": f"t{n % 4}"}, reason=["rejected", "expired"][n % 2],
                     exception_type=["ValueError", "KeyError", ""][n % 3], exception_message=f"currency EU{n}",
                     death_count=n % 5, origin=["orders", "billing"][n % 2])
    DeadLetter.objects.filter(pk__in=list(DeadLetter.objects.values_list("pk", flat=True))[:3]).update(replay_count=2)
    matches = [
        {"header": {"name": "tenant", "value": "t1"}}, {"header": {"name": "tenant", "value": ""}},
        {"body_path": {"path": "$.order.status", "value": "paid"}}, {"body_path": {"path": "$.order.n", "value": 7}},
        {"exception_type": "^(Value|Key)Error$"}, {"exception_message": "EU1[01]"}, {"origin": "billing"},
        {"reason": "expired"}, {"min_deaths": 3}, {"min_replays": 1}, {"older_than_seconds": 0},
        {"max_size": 40}, {"reason": "expired", "body_path": {"path": "$.order.status", "value": "open"}},
    ]
    # Every kind of match the console has is here: a new kind without a case here fails.
    assert {key for match in matches for key in match} == set(match_kinds.KINDS.names())
    rules = [Rule(name=f"r{i}", match=match) for i, match in enumerate(matches)]
    rules.append(Rule(name="scoped", match={"min_deaths": 1}, place_id=other.pk))
    letters = DeadLetter.objects.all()
    alone = [set(matching(rule, letters)) for rule in rules]
    with CaptureQueriesContext(connection) as queries:
        together = matching_each(rules, letters)
    assert together == alone
    assert [i for i, found in enumerate(alone) if not found] == [], "every rule takes some letter here"
    assert len([q for q in queries if "console_deadletter" in q["sql"]]) == 1
