"""A rule's body path is decided by PostgreSQL (issue 29: a round read every body in scope into
Python, 11.7 s at a million letters), with the equality rules have always had: on generated
documents, paths (in every form of console.json_path) and wanted values the database agrees
with the Python walk the rules used before (kept here as the reference) over the steps
path_steps() gives; bodies that are not JSON, or too deep for console.letters.bounded_json,
never match."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from console.letters import bounded_json
from console.models import DeadLetter, LetterDocument, LetterSearch, Rule
from console.services.rules import matching, path_steps
from console.services.search_rows import fill_search_rows, written_later
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


def python_at_path(body: bytes, steps: list[str | int], wanted: Any) -> bool:
    """How console.services.rules matched a body path before issue 29 (its ``_at_path``)."""
    try:
        value = bounded_json.loads(body)
    except (ValueError, RecursionError):
        return False
    for step in steps:
        if isinstance(step, int) and isinstance(value, list) and -len(value) <= step < len(value):
            value = value[step]
        elif isinstance(value, dict) and str(step) in value:
            value = value[str(step)]
        else:
            return False
    return value == wanted or (isinstance(wanted, str) and not isinstance(value, (dict, list)) and str(value) == wanted)


@pytest.fixture(params=["document", "body"])
def letter(request, memory_broker):
    """A letter whose body path is read from its stored document (LetterDocument), or from its
    body, as for a capture's letter before its search rows are filled."""
    letter = store_letter(memory_place(memory_broker), b"{}")
    letter.read_from = request.param
    return letter


def database_says(letter, body: bytes, path: str, wanted: Any) -> bool:
    DeadLetter.objects.filter(pk=letter.pk).update(body=body, body_size=len(body))
    if letter.read_from == "body":
        LetterSearch.objects.filter(letter_id=letter.pk).update(pending=True)
        LetterDocument.objects.filter(letter_id=letter.pk).delete()
    rule = Rule(name="probe", match={"body_path": {"path": path, "value": wanted}})
    return matching(rule, DeadLetter.objects.filter(pk=letter.pk)) == [letter.pk]


def agree(letter, body: bytes, path: str, wanted: Any) -> bool:
    expected = python_at_path(body, path_steps(path), wanted)
    assert database_says(letter, body, path, wanted) == expected, (body, path, wanted, expected)
    return expected


# Floats as Python's json writes them without an exponent (jsonb reads 1e+16 as a whole number,
# and -0.0 as 0.0: the differences BodyPathMatches names), text jsonb can hold (no NUL, no lone
# surrogate), keys that look like indexes, hold dots or are empty.
floats = st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: "e" not in repr(f) and repr(f) != "-0.0")
texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=6)
keys = st.sampled_from(["a", "b", "0", "1", "-1", "a.b", "x y", "é", "", "None"]) | texts
scalars = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | floats | texts | st.sampled_from(
    ["5", "5.0", "True", "true", "None", "null", "1", "0", "-1", "0.1"])
documents = st.recursive(scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
                         max_leaves=10)


def _paths_in(document: Any, prefix: str = "$") -> list[tuple[str, Any]]:
    """Every path into ``document`` in console.json_path's syntax: ``.name``, ``[n]``, and a
    quoted ``['name']`` for a name a dot cannot take (dots, brackets, spaces at its ends, empty)."""
    found = [(prefix, document)]
    if isinstance(document, list):
        for index, item in enumerate(document):
            found += _paths_in(item, f"{prefix}[{index}]")
    elif isinstance(document, dict):
        for key, item in document.items():
            if key and key == key.strip() and not any(char in key for char in ".[]"):
                found += _paths_in(item, f"{prefix}.{key}")
            elif "'" not in key:
                found += _paths_in(item, f"{prefix}['{key}']")
            elif '"' not in key:
                found += _paths_in(item, f'{prefix}["{key}"]')
    return found


def _without_root(path: str) -> str:
    """The same path with ``$.`` left out, as rules always took it (``order.status``)."""
    return path[2:] if path.startswith("$.") and not path.startswith("$.$") else path


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(document=documents, data=st.data())
def test_the_database_matches_a_body_path_as_python_did(letter, document, data):
    paths = [(path, value) for path, value in _paths_in(document) if path != "$"]
    if paths:
        path, value = data.draw(st.sampled_from(paths))
    else:
        path, value = data.draw(st.sampled_from(["$.a", "$[0]", "$.0"])), None
    if data.draw(st.booleans()):
        path = _without_root(path)
    choices = [value, scalars]
    if not isinstance(value, (dict, list)):
        choices.append(str(value))
    wanted = data.draw(st.one_of(*(c if isinstance(c, st.SearchStrategy) else st.just(c) for c in choices)))
    agree(letter, json.dumps(document).encode(), path, wanted)


@pytest.mark.parametrize("body, path, wanted, matches", [
    # numbers and strings, as Python compared them
    (b'{"n": 5}', "$.n", 5, True),
    (b'{"n": 5}', "$.n", "5", True),
    (b'{"n": "5"}', "$.n", 5, False),
    (b'{"n": 5}', "$.n", 5.0, True),
    (b'{"n": 5}', "$.n", "5.0", False),
    (b'{"n": 5.0}', "$.n", "5.0", True),
    (b'{"n": 5.50}', "$.n", "5.5", True),
    (b'{"n": 0.1}', "$.n", 0.1, True),
    (b'{"n": 1234567890123456.5}', "$.n", "1234567890123456.5", True),
    (b'{"n": 0.00001}', "$.n", "1e-05", True),
    (b'{"n": 12345678901234567890}', "$.n", "12345678901234567890", True),
    (b'{"n": 123.0}', "$.n", 123, True),
    (b'{"n": -123}', "$.n", -123, True),
    (b'{"n": 1234}', "$.n", 123, False),
    (b'{"b": true}', "$.b", True, True),
    (b'{"b": true}', "$.b", 1, True),
    (b'{"b": true}', "$.b", "True", True),
    (b'{"b": true}', "$.b", "true", False),
    (b'{"b": 0}', "$.b", False, True),
    (b'{"z": null}', "$.z", None, True),
    (b'{"z": null}', "$.z", "None", True),
    (b'{}', "$.z", None, False),
    # nested arrays, indexes and keys that look like indexes, keys with dots
    (b'{"a": [[1, 2], [3, {"b": "x"}]]}', "$.a[1][1].b", "x", True),
    (b'{"a": [[1, 2], [3, {"b": "x"}]]}', "$.a[1][2]", 3, False),
    (b'{"a": [10, 20]}', "$.a.1", 20, True),
    (b'{"a": {"1": "one"}}', "$.a[1]", "one", True),
    (b'{"a": [10, 20]}', "$.a.-1", 20, False),
    (b'{"a": {"-1": "x"}}', "$.a.-1", "x", True),
    (b'{"a.b": 1}', "$.a.b", 1, False),
    (b'{"a": {"b": 1}, "a.b": 2}', "$.a.b", 1, True),
    (b'{"a": {"b": [1, 2]}}', "$.a.b", [1, 2], True),
    (b'{"a": {"b": [1, 2]}}', "$.a.b", [2, 1], False),
    (b'{"a": {"b": {"c": 1, "d": 2}}}', "$.a.b", {"d": 2, "c": 1.0}, True),
    # the quoted names of console.json_path (redaction's form), the rules' form without $
    (b'{"a.b": 1}', "$['a.b']", 1, True),
    (b'{"a": {"b": 1}, "a.b": 2}', '$["a.b"]', 2, True),
    (b'{"": {"x y ": [0, "z"]}}', "$['']['x y '][1]", "z", True),
    (b'{"a": [10, 20]}', "$.a['1']", 20, True),
    (b'{"a": {"1": "one"}}', "$.a['1']", "one", True),
    (b'{"order": {"items": [{"sku": "X"}]}}', "order.items.0.sku", "X", True),
    (b'{"order": {"items": [{"sku": "X"}]}}', "order.items[0].sku", "X", True),
    (b'{"s": "top", "x": {"s": "deep"}}', "$..s", "top", True),
    (b'{"s": "top", "x": {"s": "deep"}}', "$..s", "deep", False),
    (b'{"a": {"*": 1, "b": 2}}', "$.a.*", 1, True),
    (b'{"a": {"*": 1, "b": 2}}', "$.a[*]", 2, False),
    (b'{"a": [1]}', "$.a", "[1]", False),
    (b'{"k": "x", "k": "y"}', "$.k", "y", True),
    (b'\xef\xbb\xbf{"k": "bom"}', "$.k", "bom", True),
    (b'  \n{"k": "\\u00e9t\\u00e9"}', "$.k", "\u00e9t\u00e9", True),
    (b'{"k": "say \\"hi\\""}', "$.k", 'say "hi"', True),
    (b'{"n": 1.23e2}', "$.n", 123, True),  # an int written with an exponent (0035 missed it)
])
def test_named_cases_agree(letter, body, path, wanted, matches):
    assert agree(letter, body, path, wanted) is matches


@pytest.mark.parametrize("body, path, wanted, python, database", [
    (b'{"n": 1e3, "m": "1000"}', "$.n", "1000", False, True),  # jsonb reads 1e3 as the whole number 1000
    (b'{"n": -0.0}', "$.n", "-0.0", True, False),
    (b'{"n": 0.10000000000000001}', "$.n", 0.1, True, False),  # numbers by their decimal value
    (b'{"a": [true]}', "$.a", [1], True, False),
    (b'{"n": NaN, "k": "x"}', "$.k", "x", True, False),
])
def test_the_differences_the_matcher_names(letter, body, path, wanted, python, database):
    """Where PostgreSQL's reading differs from Python's (BodyPathMatches says so): kept in
    sight, so a change to either is seen."""
    assert python_at_path(body, path_steps(path), wanted) is python
    assert database_says(letter, body, path, wanted) is database


@pytest.mark.parametrize("body", [
    b"", b"paid", b'{"status": "paid"', b"\xff\xfe{}", b'{"status": "p\xe9id"}', b"\x00" * 8,
    b'status = "paid"', b'<status>paid</status>', b'{"status": "paid"} trailing',
])
def test_bodies_that_are_not_json_never_match(letter, body):
    assert not database_says(letter, body, "$.status", "paid")
    assert not python_at_path(body, ["status"], "paid")


def test_a_body_too_deep_never_matches_and_one_just_deep_enough_does(letter):
    def nested(depth: int) -> bytes:
        return ('{"status": "paid", "x": ' + "[" * (depth - 1) + "]" * (depth - 1) + "}").encode()

    assert agree(letter, nested(bounded_json.MAX_DEPTH), "$.status", "paid")
    assert not agree(letter, nested(bounded_json.MAX_DEPTH + 1), "$.status", "paid")
    brackets_in_strings = ('{"status": "paid", "x": "' + "[" * 200 + '"}').encode()
    assert agree(letter, brackets_in_strings, "$.status", "paid")


def test_a_body_larger_than_bounded_json_reads_never_matches(letter):
    body = b'{"status": "paid", "pad": "' + b"x" * bounded_json.MAX_BYTES + b'"}'
    assert not database_says(letter, body, "$.status", "paid")


def test_matching_reads_no_body_into_python(letter, memory_broker):
    place = letter.place
    for n in range(5):
        store_letter(place, json.dumps({"order": {"status": "paid" if n % 2 else "open"}}).encode())
    rule = Rule(name="paid", match={"body_path": {"path": "$.order.status", "value": "paid"}, "max_size": 1000})
    with CaptureQueriesContext(connection) as queries:
        found = matching(rule, DeadLetter.objects.all())
    assert len(found) == 2
    # The letters, and first the ids of those without their document yet (read by PostgreSQL).
    reads = [query["sql"] for query in queries if "console_deadletter" in query["sql"]]
    assert 1 <= len(reads) <= 2
    for read in reads:
        selected = read.split(" FROM ")[0]
        assert '"body"' not in selected, selected


def test_a_captures_letters_match_before_and_after_their_documents_are_written(memory_broker):
    """A capture writes placeholders (console.services.search_rows): its letters have no stored
    document until the fill, and a body path reads their bodies meanwhile; the fill writes the
    documents, and an edit of a body writes its document again."""
    place = memory_place(memory_broker)
    rule = Rule(name="chf", match={"body_path": {"path": "$.amount.currency", "value": "CHF"}})
    with written_later():
        letters = [store_letter(place, json.dumps({"amount": {"currency": currency}}).encode())
                   for currency in ("CHF", "EUR", "CHF")]
    ids = [letter.pk for letter in letters]
    assert not LetterDocument.objects.filter(letter_id__in=ids).exists()
    assert matching(rule, DeadLetter.objects.all()) == [ids[0], ids[2]]

    assert fill_search_rows() == 3
    assert dict(LetterDocument.objects.filter(letter_id__in=ids).values_list("letter_id", "document")) == {
        ids[0]: {"amount": {"currency": "CHF"}}, ids[1]: {"amount": {"currency": "EUR"}},
        ids[2]: {"amount": {"currency": "CHF"}}}
    assert matching(rule, DeadLetter.objects.all()) == [ids[0], ids[2]]

    DeadLetter.objects.filter(pk=ids[1]).update(body=b'{"amount": {"currency": "CHF"}}')
    DeadLetter.objects.filter(pk=ids[2]).update(body=b"not json")
    assert LetterDocument.objects.get(letter_id=ids[2]).document is None
    assert matching(rule, DeadLetter.objects.all()) == [ids[0], ids[1]]
