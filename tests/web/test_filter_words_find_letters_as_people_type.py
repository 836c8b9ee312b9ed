"""Issue 46: filters as people type. A part of an exception type, an origin, a reason or a
header's value finds the letters in any case, on the letters page and through the API; a quoted
word finds the whole text only. The same words in a rule's match take the same letters in its
dry run (console.services.match_words, one table for both)."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from tests.web.factory import memory_place, store_letter

pytestmark = [pytest.mark.django_db, pytest.mark.role("admin")]

DECLINED = "com.shop.billing.PaymentDeclinedException"


@pytest.fixture
def letters(memory_broker):
    place = memory_place(memory_broker)
    return {
        "declined": store_letter(place, exception_type=DECLINED, origin="billing.payments", reason="rejected",
                                 headers={"tenant": "AcmeCorp"}).pk,
        "also_declined": store_letter(place, exception_type="PaymentDeclined", origin="Billing", reason="rejected",
                                      headers={"tenant": "acme"}).pk,
        "timeout": store_letter(place, exception_type="java.net.SocketTimeoutException", origin="stock",
                                reason="expired", headers={"tenant": "globex"}).pk,
    }


WORDS = [
    ({"exception": "paymentdeclined"}, {"declined", "also_declined"}),
    ({"exception": "DECLINED"}, {"declined", "also_declined"}),
    ({"exception": f'"{DECLINED}"'}, {"declined"}),
    ({"exception": '"paymentdeclined"'}, set()),  # exactly means the case too
    ({"origin": "BILLING"}, {"declined", "also_declined"}),
    ({"origin": '"Billing"'}, {"also_declined"}),
    ({"reason": "reject"}, {"declined", "also_declined"}),
    ({"reason": "EXPIRE"}, {"timeout"}),
    ({"header": "tenant", "header_value": "ACME"}, {"declined", "also_declined"}),
    ({"header": "tenant", "header_value": '"acme"'}, {"also_declined"}),
]


def _page_ids(response) -> set[int]:
    assert response.status_code == 200
    html = response.content.decode()
    assert "errorlist" not in html, html
    return {int(i) for i in re.findall(r'name="ids" value="(\d+)"', html)}


@pytest.mark.parametrize(("query", "wanted"), WORDS, ids=[str(query) for query, _ in WORDS])
def test_a_word_finds_the_same_letters_on_the_page_and_through_the_api(signed_in, letters, query, wanted):
    ids = {letters[name] for name in wanted}
    assert _page_ids(signed_in.get(reverse("letters"), query)) == ids
    api = signed_in.get("/api/letters/", query)
    assert api.status_code == 200, api.content
    assert {row["id"] for row in api.json()["results"]} == ids


RULE_WORDS = [
    ({"exception_type": "paymentdeclined"}, {"exception": "paymentdeclined"}),
    ({"exception_type": f'"{DECLINED}"'}, {"exception": f'"{DECLINED}"'}),
    ({"origin": "BILLING"}, {"origin": "BILLING"}),
    ({"origin": '"Billing"'}, {"origin": '"Billing"'}),
    ({"reason": "EXPIRE"}, {"reason": "EXPIRE"}),
    ({"header": {"name": "tenant", "value": "ACME"}}, {"header": "tenant", "header_value": "ACME"}),
]


@pytest.mark.parametrize(("match", "query"), RULE_WORDS, ids=[str(match) for match, _ in RULE_WORDS])
def test_the_same_words_in_a_rule_take_the_same_letters(signed_in, letters, match, query):
    made = signed_in.post("/api/rules/", {"name": "words", "match": match, "action": {"kind": "hold"}},
                          content_type="application/json")
    assert made.status_code == 201, made.content
    dry = signed_in.post(f"/api/rules/{made.json()['id']}/dry-run/").json()
    found = {row["id"] for row in signed_in.get("/api/letters/", query).json()["results"]}
    assert found and dry["matched"] == len(found)
    assert set(dry["sample"]) == found


def test_the_letters_page_says_how_its_text_filters_read_a_word(signed_in, letters):
    html = signed_in.get(reverse("letters")).content.decode()
    assert "a part, any case" in html


def test_a_rule_saved_before_keeps_what_it_took(letters):
    """Migration 0046 quotes a saved rule's origin, reason and header value (exact before), in
    the rule and its versions, and audits it once."""
    from importlib import import_module

    from django.apps import apps

    from console.models import AuditEvent, DeadLetter, Rule, RuleVersion
    from console.services.rules.matching import matches

    saved = {"origin": "Billing", "reason": "rejected", "header": {"name": "tenant", "value": "acme"},
             "exception_type": "Declined"}
    rule = Rule.objects.create(name="saved before", position=10, match=saved, action={"kind": "hold"})
    RuleVersion.objects.create(rule=rule, version=1, name=rule.name, match=saved, action=rule.action, made_by="t")
    import_module("console.migrations.0046_rule_words_kept_exact").keep_exact(apps, None)

    rule.refresh_from_db()
    assert rule.match == {"origin": '"Billing"', "reason": '"rejected"',
                          "header": {"name": "tenant", "value": '"acme"'}, "exception_type": "Declined"}
    assert RuleVersion.objects.get(rule=rule).match == rule.match
    assert set(matches(rule, DeadLetter.objects.all()).values_list("id", flat=True)) == {letters["also_declined"]}
    (event,) = AuditEvent.objects.filter(action="rule.words_quoted")
    assert event.details["rules"] == [rule.pk]
