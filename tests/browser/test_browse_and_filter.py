"""Opening a place and narrowing its letters by header value and by body text."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from tests.web.factory import store_letter

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_filter_a_place_by_header_value_and_by_body_text(signed_in_page, place, screenshot):
    page = signed_in_page
    store_letter(place, b'{"order": 1, "sku": "A-1"}', headers={"tenant": "acme"})
    store_letter(place, b"payment timeout for order 2", headers={"tenant": "globex"}, reason="expired")
    store_letter(place, b'{"order": 3, "sku": "B-7"}', headers={"tenant": "acme"}, exception_type="ValueError")

    page.goto("/")
    page.get_by_role("link", name="orders.dlq").click()
    expect(page.get_by_role("heading", name="orders.dlq")).to_be_visible()
    rows = page.locator("table.letters tbody tr")
    expect(rows).to_have_count(3)
    screenshot(page, "place")
    page.get_by_label("Tick every letter on this page").check()
    row_boxes = page.get_by_role("checkbox", name=re.compile(r"^Select letter \d+$"))
    expect(row_boxes).to_have_count(3)
    for box in row_boxes.all():
        expect(box).to_be_checked()

    page.get_by_label("Header name").fill("tenant")
    page.get_by_label("Header value").fill("acme")
    page.get_by_role("button", name="Filter").click()
    expect(page).to_have_url(re.compile(r"[?&]header=tenant&header_value=acme"))
    expect(rows).to_have_count(2)
    expect(page.get_by_label("Select all 2 matching")).to_be_visible()

    page.get_by_role("link", name="Clear").click()
    page.get_by_label("Body contains").fill("timeout")
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("payment timeout for order 2")
    assert page.watch.errors == []
