"""A new kind of rule match is one room: a module that declares its value's check, its condition
and its help (tests/kinds_for_tests/min_size_match.py, which no file under console/ names), once
registered, is listed on the Rules page, described by the API schema, taken (and refused) by the
API, counted by the dry run and decided by a round, as the ten kinds the console has."""

from __future__ import annotations

import pytest
from django.urls import reverse

from console.jobs.automation.rules_at_work import apply_rules
from console.models import Job, Rule
from console.services.rules.matches import register, unregister
from tests.web.factory import memory_place, store_letter

pytestmark = [pytest.mark.django_db, pytest.mark.role("admin")]


@pytest.fixture
def min_size():
    register("min_size", "tests.kinds_for_tests.min_size_match.MinSize")
    yield
    unregister("min_size")


@pytest.fixture
def letters(memory_broker):
    place = memory_place(memory_broker)
    return {"small": [store_letter(place, b"tiny").pk for _ in range(2)],
            "large": [store_letter(place, b"x" * 2000).pk for _ in range(3)]}


def test_the_rules_page_lists_it_with_its_help(min_size, signed_in):
    html = signed_in.get(reverse("rules")).content.decode()
    assert ('<div id="match-min_size"><dt><code>min_size</code></dt><dd>A body of at least this many bytes, '
            'e.g. <code>{&quot;min_size&quot;: 1024}</code></dd></div>') in html
    assert '<div id="match-exception_type">' in html  # beside the console's own


def test_without_it_registered_the_page_and_the_api_do_not_take_it(signed_in):
    assert 'id="match-min_size"' not in signed_in.get(reverse("rules")).content.decode()
    refused = signed_in.post("/api/rules/", {"name": "big", "match": {"min_size": 10}, "action": {"kind": "hold"}},
                             content_type="application/json")
    assert refused.status_code == 400 and "match does not take min_size" in refused.content.decode()


def test_the_api_schema_describes_it(min_size, signed_in):
    schema = signed_in.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    body = schema["paths"]["/api/rules/"]["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    match = schema["components"]["schemas"][body.rsplit("/", 1)[1]]["properties"]["match"]
    assert match["properties"]["min_size"] == {"type": "integer", "minimum": 0,
                                               "description": "A body of at least this many bytes"}
    assert match["properties"]["header"]["required"] == ["name"]


def test_the_api_takes_it_the_dry_run_counts_it_and_a_round_decides_it(min_size, signed_in, letters):
    refused = signed_in.post("/api/rules/", {"name": "big", "match": {"min_size": -1}, "action": {"kind": "hold"}},
                             content_type="application/json")
    assert refused.status_code == 400
    assert "match.min_size must be a whole number from 0 to 2147483647" in refused.content.decode()

    made = signed_in.post("/api/rules/", {"name": "big bodies fail", "match": {"min_size": 1000},
                                          "action": {"kind": "mark_failed"}, "reason": "too large to retry"},
                          content_type="application/json")
    assert made.status_code == 201, made.content
    assert made.json()["match"] == {"min_size": 1000}
    rule = Rule.objects.get(pk=made.json()["id"])

    dry = signed_in.post(f"/api/rules/{rule.pk}/dry-run/").json()
    assert (dry["matched"], dry["by_action"]) == (3, {"mark_failed": 3})
    assert set(dry["sample"]) == set(letters["large"])

    enabled = signed_in.patch(f"/api/rules/{rule.pk}/", {"enabled": True, "reason": "big bodies fail"},
                              content_type="application/json")
    assert enabled.status_code == 200, enabled.content
    assert apply_rules() == {"big bodies fail@v1": 3}
    (job,) = Job.objects.filter(actor_name="rule:big bodies fail@v1")
    assert (job.kind, sorted(job.selection["ids"])) == ("mark_failed", letters["large"])
