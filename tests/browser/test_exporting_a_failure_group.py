"""Issue 48 in Chromium: from a failure group's page, the letters are downloaded as JSON Lines
and as CSV, the files holding that group's letters and no other."""

from __future__ import annotations

import csv
import io
import json

import pytest

from tests.web.factory import memory_place, store_letter

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_failure_groups_letters_download_from_its_page(signed_in_page, memory_broker):
    page = signed_in_page
    place = memory_place(memory_broker)
    group = [store_letter(place, json.dumps({"order": n}).encode(), exception_type="OrderClosed",
                          exception_message=f"order {n} closed") for n in range(3)]
    store_letter(place, b'{"other": true}', exception_type="SomethingElse")

    page.goto(f"/groups/{group[0].fingerprint}/")
    menu = page.locator("#export-menu")
    with page.expect_download() as downloading:
        menu.get_by_role("link", name="JSON Lines").click()
    download = downloading.value
    assert download.suggested_filename.endswith(".jsonl")
    lines = [json.loads(line) for line in open(download.path(), encoding="ascii").read().splitlines()]
    assert lines[0]["export"]["filter"]["fingerprint"] == group[0].fingerprint
    assert [row["id"] for row in lines[1:]] == [letter.pk for letter in group]

    with page.expect_download() as downloading:
        menu.get_by_role("link", name="CSV").click()
    rows = list(csv.DictReader(io.StringIO(open(downloading.value.path(), encoding="utf-8").read())))
    assert sorted(int(row["id"]) for row in rows) == [letter.pk for letter in group]
