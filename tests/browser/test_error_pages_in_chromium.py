"""The 404 and 500 pages in Chromium with DEBUG off: the console's look (its style sheet, its
navigation), no console error and no Content-Security-Policy violation."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from console.web.views import inventory

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

#: Runs before any page script: records every CSP violation the page reports.
RECORD_VIOLATIONS = """
window.__violations = [];
document.addEventListener('securitypolicyviolation',
    e => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
"""

#: What Chromium logs for a page answered with an error status: the only console error allowed.
ANSWERED = "Failed to load resource: the server responded with a status of %s"


@pytest.fixture(autouse=True)
def debug_off(settings):
    settings.DEBUG = False


def _styled(page) -> None:
    """The console's style sheet applied: the top bar is laid out as a flex row."""
    assert page.locator("header.topbar").evaluate("e => getComputedStyle(e).display") == "flex"


def test_the_not_found_page(signed_in_page, screenshot):
    page = signed_in_page
    page.context.add_init_script(RECORD_VIOLATIONS)
    response = page.goto("/letters/999999999/")
    assert response.status == 404
    expect(page.get_by_role("heading", name="Not found")).to_be_visible()
    expect(page.get_by_role("navigation", name="Main")).to_be_visible()
    _styled(page)
    page.get_by_role("link", name="Back to the inventory").click()
    expect(page).to_have_title("Inventory · DLO")
    page.go_back()
    page.wait_for_load_state("networkidle")
    screenshot(page, "not-found")
    # Chromium reports the 404 answer itself as a failed resource; nothing else may appear.
    print("ERRORS", page.watch.errors)
    assert [e for e in page.watch.errors if "404" not in e] == []
    assert page.evaluate("window.__violations") == []


def test_the_server_error_page(signed_in_page, monkeypatch, screenshot):
    def fails(user=None):
        raise RuntimeError("a bug in a page")

    monkeypatch.setattr(inventory, "inventory_rows", fails)
    page = signed_in_page
    page.context.add_init_script(RECORD_VIOLATIONS)
    response = page.goto("/")
    assert response.status == 500
    expect(page.get_by_role("heading", name="Something broke")).to_be_visible()
    expect(page.get_by_role("link", name="Back to the inventory")).to_be_visible()
    expect(page.locator("body")).not_to_contain_text("a bug in a page")
    _styled(page)
    page.wait_for_load_state("networkidle")
    screenshot(page, "server-error")
    assert page.watch.errors == [ANSWERED % "500 (Internal Server Error)"]
    assert page.evaluate("window.__violations") == []
