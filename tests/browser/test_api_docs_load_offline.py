"""/api/docs/ in Chromium: Swagger UI comes from the console's own static files (no CDN, which
the Content-Security-Policy forbids and an offline install cannot reach) and lists the API's
operations, with no console error and no CSP violation."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

#: Runs before any page script: records every CSP violation the page reports.
RECORD_VIOLATIONS = """
window.__violations = [];
document.addEventListener('securitypolicyviolation',
    e => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
"""


def _requests(page) -> list[str]:
    """Every URL the page asks for (the test fails on any outside the console)."""
    asked: list[str] = []
    page.on("request", lambda request: asked.append(request.url))
    return asked


def test_swagger_ui_lists_the_operations_from_the_navigation(signed_in_page, live_server, screenshot):
    page = signed_in_page
    page.context.add_init_script(RECORD_VIOLATIONS)
    asked = _requests(page)

    page.goto("/")
    page.get_by_text("Settings", exact=True).click()  # the settings pages are in its menu
    page.get_by_role("navigation", name="Main").get_by_role("link", name="API", exact=True).click()
    expect(page).to_have_url(f"{live_server.url}/api/docs/")
    operations = page.locator("#swagger-ui .opblock-summary-path")
    expect(operations.first).to_be_visible()
    expect(page.locator("#swagger-ui")).to_contain_text("Dead Letter Office API")
    expect(page.locator("#swagger-ui .opblock-summary-path[data-path='/api/jobs/']").first).to_be_visible()
    assert operations.count() > 40
    page.wait_for_load_state("networkidle")
    screenshot(page, "api-docs")

    assert page.watch.errors == []
    assert page.evaluate("window.__violations") == []
    assert [url for url in asked if not url.startswith(live_server.url)] == []

