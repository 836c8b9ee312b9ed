"""Issue 46: every link lands where it says. Chromium opens every page of a console holding
letters in two places and two failure groups, a job, a rule, a channel and a redaction rule (the
walk of test_every_page_in_chromium), and follows every link each page draws: each target answers
200 with no form error, and a link that shows a number of letters leads to a list that counts
as many. (Analytics' figures, computed by the pipeline on Spark, are followed the same way by
tests/pipeline/test_analytics_page_links_to_the_letters.py.)"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest

from tests.browser.test_every_page_in_chromium import ids, pages  # noqa: F401 - ids is a fixture
from tests.web.factory import memory_place, store_letter

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.role("admin")]

#: Links that are not pages to land on: signing out, downloads, the API's JSON.
LEFT_OUT = re.compile(r"^/(sign-out|logout|api/(?!docs)|static/|metrics)|[?&](format|download)=")
MATCHING = re.compile(r'id="matching-count"><strong>(\d+)</strong>')
FORM_ERROR = re.compile(r'class="errorlist|<span class="error"')


@pytest.fixture
def more_letters(memory_broker, ids):  # noqa: F811 - the fixture
    """A second place and a second failure group beside the walk's letter."""
    place = memory_place(memory_broker, origin="billing")
    for _ in range(3):
        store_letter(place, exception_type="com.shop.billing.PaymentDeclinedException", origin="billing")
    store_letter(place, exception_type="java.net.SocketTimeoutException", origin="billing")
    return ids


def _links(page) -> list[tuple[str, str]]:
    return page.eval_on_selector_all(
        "main a[href], header a[href]",
        "links => links.map(a => [a.getAttribute('href'), a.textContent.trim()])")


def test_every_link_of_every_page_lands_on_a_page_with_the_count_it_promised(signed_in_page, more_letters):
    page = signed_in_page
    followed: dict[str, str] = {}  # href -> the page's html
    broken, counts, checked = [], [], 0
    for url in pages(more_letters):
        answer = page.request.get(url, max_redirects=0)
        if (answer.status != 200 or not answer.headers.get("content-type", "").startswith("text/html")
                or "<html" not in answer.text()[:4000].lower()):
            continue
        page.goto(url)
        for href, text in _links(page):
            target = urlsplit(href)
            if target.scheme or target.netloc or href.startswith("#") or LEFT_OUT.search(href):
                continue
            href = href.split("#", 1)[0]
            if href not in followed:
                landed = page.request.get(href)
                html = landed.text()
                followed[href] = html
                if landed.status != 200 or FORM_ERROR.search(html):
                    broken.append((url, text, href, landed.status, FORM_ERROR.search(html) and "form error"))
            html = followed[href]
            if text.isdigit() and (found := MATCHING.search(html)):
                checked += 1
                if int(found.group(1)) != int(text):
                    counts.append((url, text, href, found.group(1)))
    assert len(followed) > 40, sorted(followed)
    assert broken == [], broken
    assert counts == [], counts
    assert checked > 0  # some link promised a count, and it was checked
