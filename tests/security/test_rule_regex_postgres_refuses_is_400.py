"""Finding 13 of issue 28: a rule's regular expression was checked by Python's ``re``, but rules
run in PostgreSQL, whose regular expressions differ: ``(?P<x>a)`` compiles in Python and is
"invalid regular expression" to PostgreSQL, so saving it enabled, or its dry run, was a 500.
PostgreSQL itself now checks a pattern when a rule is saved (in a savepoint): what saves also
runs, and what PostgreSQL refuses is a 400 that says so, on create and change, enabled or not.
A rule saved before (a row with such a pattern) answers its dry run with the same 400."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from console.models import AuditEvent, Rule
from tests.web.factory import store_letter

pytestmark = [pytest.mark.django_db, pytest.mark.role("admin")]

#: Python's re takes each of these; PostgreSQL refuses each.
REFUSED_BY_POSTGRES = ["(?P<x>a)", "(?<name>a)", "a{,3}b(?#"]


@pytest.fixture
def api(operator) -> APIClient:
    client = APIClient()
    client.force_authenticate(operator)
    return client


@pytest.mark.parametrize("enabled", [True, False])
@pytest.mark.parametrize("pattern", REFUSED_BY_POSTGRES[:2])
@pytest.mark.parametrize("key", ["exception_type", "exception_message"])
def test_creating_a_rule_postgres_cannot_run_is_a_400(api, place, enabled, pattern, key):
    store_letter(place, exception_type="ValueError")
    answer = api.post("/api/rules/", {"name": "bad", "enabled": enabled, "match": {key: pattern},
                                      "action": {"kind": "hold"}}, format="json")
    assert answer.status_code == 400, answer.content
    assert f"match.{key} is not a regular expression PostgreSQL can run" in answer.json()["detail"]
    assert not Rule.objects.exists() and not AuditEvent.objects.filter(action__startswith="rule.").exists()


def test_changing_a_rule_to_such_a_pattern_is_a_400(api, place):
    rule = api.post("/api/rules/", {"name": "fine", "match": {"exception_type": "Value.*"},
                                    "action": {"kind": "hold"}}, format="json").json()
    answer = api.patch(f"/api/rules/{rule['id']}/", {"match": {"exception_type": "(?P<x>a)"}}, format="json")
    assert answer.status_code == 400 and "PostgreSQL" in answer.json()["detail"], answer.content
    assert Rule.objects.get().match == {"exception_type": "Value.*"}
    # A pattern PostgreSQL runs still saves, and its dry run runs (the savepoint left the
    # transaction usable).
    assert api.patch(f"/api/rules/{rule['id']}/", {"match": {"exception_type": "(?:Val)ue"}},
                     format="json").status_code == 200
    assert api.post(f"/api/rules/{rule['id']}/dry-run/").status_code == 200


def test_the_dry_run_of_a_rule_saved_earlier_with_such_a_pattern_is_a_400(api, client, operator, place):
    store_letter(place, exception_type="ValueError")
    rule = Rule.objects.create(name="legacy", position=10, match={"exception_type": "(?P<x>a)"},
                               action={"kind": "hold"})
    answer = api.post(f"/api/rules/{rule.pk}/dry-run/")
    assert answer.status_code == 400, answer.content
    assert "rule 'legacy'" in answer.json()["detail"] and "PostgreSQL" in answer.json()["detail"]
    client.force_login(operator)
    page = client.post(f"/rules/{rule.pk}/dry-run/", HTTP_HX_REQUEST="true")
    assert page.status_code == 400 and "PostgreSQL" in page.content.decode()
