"""A letter whose body and headers carry markup shows it as text and runs none of it."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.web.factory import XSS_IMG, XSS_SCRIPT, store_letter

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HOSTILE = XSS_SCRIPT + XSS_IMG


def test_hostile_body_and_header_are_text_and_nothing_runs(signed_in_page, place, screenshot):
    page = signed_in_page
    letter = store_letter(
        place, HOSTILE.encode(), headers={"x-note": HOSTILE, XSS_IMG: "name is hostile too",
                                         "x-death": [{"queue": "orders", "reason": "rejected", "count": 2,
                                                      "exchange": "shop", "routing-keys": ["order.created"]}]},
        exception_type="MarkupError", exception_message=XSS_IMG,
    )
    page.goto(f"/places/{place.pk}/")
    expect(page.locator("table.letters")).to_contain_text(HOSTILE[:60])
    page.get_by_role("link", name=str(letter.pk), exact=True).click()
    page.wait_for_load_state("load")

    expect(page.locator("pre.body")).to_have_text(HOSTILE)
    expect(page.get_by_role("row", name="x-note")).to_contain_text(HOSTILE)
    expect(page.get_by_role("row").filter(has_text="name is hostile too")).to_contain_text(XSS_IMG)
    expect(page.locator("table.x-death tbody td")).to_have_text(
        ["orders", "rejected", "2", "shop", "order.created", "", ""])
    # Nothing the message carried became an element: no <img>, and only our own scripts.
    assert page.locator("img").count() == 0
    sources = page.eval_on_selector_all("script", "els => els.map(e => e.getAttribute('src'))")
    assert sources and all(src and src.startswith("/static/") for src in sources)
    screenshot(page, "letter")
    assert page.watch.dialogs == []
    assert page.watch.errors == []
