"""One JSON-path syntax (console.json_path) for a rule's body path and a redaction rule: each
reads the forms it read before, and the forms the other took; malformed paths are refused by
both in the same words."""

from __future__ import annotations

import json

import pytest

from console.access.redactor import MASK, Redactor, RuleError, compile_rule
from console.models import Rule
from console.services.rules import RuleError as RulesRuleError
from console.services.rules import check_match, path_steps


def _masked(path: str, body: dict) -> dict:
    return json.loads(Redactor([("json_path", path)]).body(json.dumps(body).encode()))


@pytest.mark.parametrize("path, steps", [
    # the rules' forms, read as rules always read them (PostgreSQL walks these keys and indexes)
    ("$.order.items[0].sku", ["order", "items", 0, "sku"]),
    ("order.items.0.sku", ["order", "items", 0, "sku"]),
    ("  $.order.status  ", ["order", "status"]),
    ("$order", ["order"]),
    ("$.a.-1", ["a", "-1"]),
    ("$.a b.x:y/z", ["a b", "x:y/z"]),
    ("$.$id.é", ["$id", "é"]),
    ("$.a[01]", ["a", 1]),
    ("$.a[b]", ["a", "b"]),
    ("$.a.²", ["a", "²"]),
    # a rule reads one place: .. as ., * as a field named *
    ("$..status", ["status"]),
    ("$.items[*].sku", ["items", "*", "sku"]),
    # the redaction's quoted names, now read by rules too
    ("$['card']['number']", ["card", "number"]),
    ('$["a.b"][0]', ["a.b", 0]),
    ("$['0']", [0]),
])
def test_a_rules_body_path_is_read_as_keys_and_indexes(path, steps):
    assert path_steps(path) == steps


def test_redactions_old_forms_mask_what_they_masked():
    body = {"card": {"number": "4000", "cvc": "123"}, "items": [{"iban": "DE1"}, {"iban": "DE2"}],
            "customer": {"contact": {"email": "a@b"}}, "email": "c@d", "list": [1, 2], "keep": "yes"}
    assert _masked("$.card.number", body)["card"] == {"number": MASK, "cvc": "123"}
    assert _masked("$['card']['cvc']", body)["card"] == {"number": "4000", "cvc": MASK}
    assert _masked('$["card"].*', body)["card"] == {"number": MASK, "cvc": MASK}
    assert _masked("$.items[*].iban", body)["items"] == [{"iban": MASK}, {"iban": MASK}]
    assert _masked("$.items[1].iban", body)["items"] == [{"iban": "DE1"}, {"iban": MASK}]
    assert _masked("$.list[0]", body)["list"] == [MASK, 2]
    everywhere = _masked("$..email", body)
    assert (everywhere["email"], everywhere["customer"]["contact"]["email"]) == (MASK, MASK)
    assert _masked("$.card-number", {"card-number": "4000"}) == {"card-number": MASK}


def test_redaction_reads_the_rules_forms():
    body = {"card": {"number": "4000"}, "a b": {"x:y": "secret"}, "keep": "yes"}
    assert _masked("card.number", body)["card"] == {"number": MASK}
    assert _masked("$card.number", body)["card"] == {"number": MASK}
    assert _masked("$.a b.x:y", body)["a b"] == {"x:y": MASK}
    assert _masked("$.card[number]", body)["card"] == {"number": MASK}
    assert _masked("card.number", body)["keep"] == "yes"


@pytest.mark.parametrize("path, why", [
    ("$", "names no field"),
    ("$.card[", "cannot be read from '\\['"),
    ("$.card.", "cannot be read from '\\.'"),
    ("$.a]b", "cannot be read from '\\]b'"),
    ("$.a[0]b", "cannot be read from 'b'"),
    ("$['a]", "cannot be read"),
])
def test_a_malformed_path_is_refused_by_both_in_the_same_words(path, why):
    with pytest.raises(RuleError, match=f"the JSON path {why}"):
        compile_rule("json_path", path)
    with pytest.raises(RulesRuleError, match=f"match.body_path.path {why}"):
        path_steps(path)


def test_a_rule_saved_with_a_path_now_refused_is_named_before_it_is_matched():
    """The rules' old reading skipped what it could not read ($.order[ was $.order): such a
    rule, saved before, is told of (a dry run says so) instead of failing the match."""
    rule = Rule(name="old", match={"body_path": {"path": "$.order[", "value": 1}})
    with pytest.raises(RulesRuleError, match=r"rule 'old': match.body_path.path cannot be read from '\['; change it"):
        check_match(rule)
