"""What each kind of redaction rule masks, and which patterns are refused when saved."""

from __future__ import annotations

import json

import pytest

from console.access.redactor import MASK, Redactor, RuleError, compile_rule


def _masked(rules, body: dict) -> dict:
    return json.loads(Redactor(rules).body(json.dumps(body).encode()))


def test_json_paths_reach_fields_nested_fields_and_list_items():
    body = {"card": {"number": "4000", "cvc": "123"}, "items": [{"iban": "DE1"}, {"iban": "DE2"}],
            "customer": {"contact": {"email": "a@b"}}, "email": "c@d", "keep": "yes"}
    masked = _masked([("json_path", "$.card.number"), ("json_path", "$.items[*].iban"),
                      ("json_path", "$..email"), ("json_path", "$['card']['cvc']")], body)
    assert masked == {"card": {"number": MASK, "cvc": MASK}, "items": [{"iban": MASK}, {"iban": MASK}],
                      "customer": {"contact": {"email": MASK}}, "email": MASK, "keep": "yes"}


def test_regexes_apply_to_text_bodies_and_header_names_to_headers():
    redactor = Redactor([("regex", r"\b(?:\d[ -]*?){13,19}\b"), ("header", "x-secret-*")])
    assert redactor.body(b"card 4111 1111 1111 1111 ok") == f"card {MASK} ok".encode()
    assert redactor.value({"X-Secret-Token": "t", "x-other": "4111111111111111", "n": 5}) == {
        "X-Secret-Token": MASK, "x-other": MASK, "n": 5}
    assert redactor.body(b"\xff\xfe binary") is None


@pytest.mark.parametrize("kind, pattern, why", [
    ("json_path", "$", "whole body"),
    ("json_path", "$.card[", "cannot be read"),
    ("json_path", "$.card]", "cannot be read"),
    ("regex", "(open", "not a regular expression"),
    ("regex", "x*", "matches empty text"),
    ("header", "  ", "empty"),
])
def test_unusable_patterns_are_refused(kind, pattern, why):
    with pytest.raises(RuleError, match=why):
        compile_rule(kind, pattern)
