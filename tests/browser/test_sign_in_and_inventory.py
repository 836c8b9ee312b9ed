"""Signing in lands on the inventory, which lists the dead place."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.web.factory import store_letter

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_sign_in_and_see_the_place_in_the_inventory(page, operator, place, screenshot, live_server):
    store_letter(place, b'{"order": 1}')
    page.goto("/")
    expect(page).to_have_url(f"{live_server.url}/sign-in/?next=/")
    page.get_by_label("Username").fill("olga")
    page.get_by_label("Password").fill("triage-pass-123")
    page.get_by_role("button", name="Sign in").click()

    expect(page.get_by_role("heading", name="Inventory")).to_be_visible()
    row = page.get_by_role("row").filter(has=page.get_by_role("link", name="orders.dlq"))
    expect(row).to_be_visible()
    expect(row.get_by_role("button", name="Capture")).to_be_visible()
    expect(page.get_by_role("button", name="Discover")).to_be_visible()
    screenshot(page, "inventory")
    assert page.watch.errors == []
