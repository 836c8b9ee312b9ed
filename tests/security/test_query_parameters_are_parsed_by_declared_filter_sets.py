"""Query parameters are parsed by declared filter sets (design invariant 13, issue 28 build item
5), not by hand: the API document of each list says exactly what its filter set parses, the page
and the API of a list share one filter set, and no view or selection code reads a number with
``str.isdigit()`` (true for '²', which ``int()`` refuses) or ``int()`` (which reads '٣')."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from drf_spectacular.generators import SchemaGenerator

from console.services.filtersets import (
    AuditFilterSet,
    DeliveryFilterSet,
    GroupFilterSet,
    OriginFilterSet,
    PlaceFilterSet,
)
from console.services.letter_filters import LetterFilterSet
from console.services.parsing import WholeNumberField
from console.services.selection import FILTER_KEYS

ROOT = Path(__file__).resolve().parents[2] / "console"
#: Beside the filters: the keyset pages' own, and the letters list's ``count`` (a FlagField).
KEYSET = {"cursor", "page_size", "count"}
LISTS = {
    "/api/letters/": LetterFilterSet,
    "/api/groups/": GroupFilterSet,
    "/api/places/": PlaceFilterSet,
    "/api/origins/": OriginFilterSet,
    "/api/notifications/deliveries/": DeliveryFilterSet,
    "/api/audit/": AuditFilterSet,
}


@pytest.mark.parametrize(("path", "filterset"), LISTS.items())
def test_the_api_document_names_what_the_filter_set_parses(path, filterset):
    operation = SchemaGenerator().get_schema(request=None, public=True)["paths"][path]["get"]
    documented = {p["name"]: p["schema"] for p in operation.get("parameters", []) if p["in"] == "query"}
    assert set(documented) - KEYSET == set(filterset.base_filters)
    for name, declared in filterset.base_filters.items():
        if isinstance(declared.field, WholeNumberField):  # ids, weekday, hour...: ASCII digits, in range
            assert documented[name]["type"] == "integer" and "maximum" in documented[name], (path, name)


def test_a_letters_filter_has_the_keys_jobs_and_pages_keep():
    assert set(LetterFilterSet.base_filters) == set(FILTER_KEYS)


def test_the_audit_page_shows_the_api_filter_sets_fields(client, operator):
    client.force_login(operator)
    html = client.get("/audit/").content.decode()
    for name in AuditFilterSet.base_filters:
        assert f'name="{name}"' in html


HAND_MADE = re.compile(r"\.isdigit\(\)|\.isnumeric\(\)|\.isdecimal\(\)|\bint\((request|self\.request|query|params)")


def test_no_view_or_selection_parses_a_number_by_hand():
    files = [*(ROOT / "api").rglob("*.py"), *(ROOT / "web").rglob("*.py"), ROOT / "services" / "selection.py"]
    found = [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
             for path in files for number, line in enumerate(path.read_text().splitlines(), 1)
             if HAND_MADE.search(line)]
    assert found == []
