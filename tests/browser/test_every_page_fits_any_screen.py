"""Issue 46: pages that fit any screen. On a phone (390 x 844) and a laptop (1440 x 900), every
page of the console (the walk of test_every_page_in_chromium, with a letter, a job, a rule, a
channel and a redaction rule) is no wider than the window: wide tables scroll inside their own
box. The navigation's daily pages fit the bar on one line at 1440 px, settings are one menu, and
below 800 px the bar folds into a Menu button; every item can be reached and clicked."""

from __future__ import annotations

import pytest

from tests.browser.test_every_page_in_chromium import ids, pages  # noqa: F401 - ids is a fixture

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.role("admin")]

SCREENS = {"phone": {"width": 390, "height": 844}, "laptop": {"width": 1440, "height": 900}}

#: The last elements (the innermost come last) that reach past the window's right edge (what to fix), for the message.
PAST_THE_EDGE = """() => [...document.querySelectorAll('body *')]
    .filter(e => e.getBoundingClientRect().right > window.innerWidth + 0.5
                 && (e.parentElement === null || e.parentElement.closest('.scroll') === null))
    .slice(-6).map(e => e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + '.' + e.className + ' '
                        + Math.round(e.getBoundingClientRect().right))"""


@pytest.mark.parametrize("screen", SCREENS)
def test_no_page_is_wider_than_the_window(signed_in_page, ids, screen):  # noqa: F811 - the fixture
    page = signed_in_page
    page.set_viewport_size(SCREENS[screen])
    wider = []
    for url in pages(ids):
        answer = page.request.get(url, max_redirects=0)
        if (answer.status != 200 or not answer.headers.get("content-type", "").startswith("text/html")
                or "<html" not in answer.text()[:4000].lower()):
            continue  # not a page (as the walk of every page decides)
        page.goto(url)
        try:
            page.wait_for_load_state("networkidle", timeout=3_000)  # what htmx loads into the page
        except Exception:  # noqa: BLE001 - a page that polls on: measured as it is
            pass
        sizes = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        if sizes[0] > sizes[1]:
            wider.append((url, *sizes, page.evaluate(PAST_THE_EDGE)))
    assert wider == [], wider


def _items(page) -> list[tuple[str, str]]:
    return page.eval_on_selector_all('nav[aria-label="Main"] a',
                                     "links => links.map(a => [a.textContent.trim(), a.getAttribute('href')])")


@pytest.mark.parametrize("screen", SCREENS)
def test_every_navigation_item_can_be_reached_and_clicked(signed_in_page, ids, screen):  # noqa: F811
    page = signed_in_page
    page.set_viewport_size(SCREENS[screen])
    page.goto("/")
    items = _items(page)
    assert {"Inventory", "Letters", "Jobs", "Approvals", "Audit", "Roles", "API tokens"} <= {
        text.split()[0] if text.startswith("Approvals") else text for text, _ in items}
    if screen == "laptop":
        tops = page.eval_on_selector_all('nav[aria-label="Main"] > a, nav[aria-label="Main"] > details > summary',
                                         "items => items.map(item => Math.round(item.getBoundingClientRect().top))")
        assert len(set(tops)) == 1, tops  # the daily pages and Settings on one line
        assert not page.is_visible("text=Menu")
    for text, href in items:
        page.goto("/")
        if screen == "phone":
            assert not page.is_visible(f'nav[aria-label="Main"] a[href="{href}"]')
            page.click("label.menu-button")
        link = page.locator(f'nav[aria-label="Main"] a[href="{href}"]')
        if not link.is_visible():  # a settings item: in the Settings menu
            page.click("details.settings > summary")
        with page.expect_navigation():
            link.click()
        assert page.url.endswith(href), (text, page.url)
        assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"), text
    page.goto("/")
    if screen == "phone":
        page.click("label.menu-button")
    with page.expect_navigation():
        page.click("text=Sign out")
    assert "/sign-in/" in page.url
