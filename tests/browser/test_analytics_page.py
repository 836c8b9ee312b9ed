"""The analytics page in Chromium: the figures the pipeline stored, a heat map of arrivals drawn
as SVG with a link in each of its 168 cells, bar charts, and, clicked, a cell and a figure lead
to the letters behind them. The pipeline's computation has its own tests (tests/pipeline); here
its result is stored as the job stores it."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from console.models import DeadLetter
from console.pipeline.analytics import Analytics, store
from tests.web.factory import memory_place, store_letter

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_heat_map_cells_and_figures_lead_to_their_letters(signed_in_page, memory_broker, screenshot):
    place = memory_place(memory_broker)
    letters = [store_letter(place, f'{{"n": {i}}}'.encode(), exception_type="TimeoutError") for i in range(3)]
    arrived = DeadLetter.objects.get(pk=letters[0].pk).captured_at
    fingerprint = letters[0].fingerprint
    figures = dict(letters=3, resolved=2, replayed=2, failed=0, came_back=1, recurrences=0,
                   median_minutes=90.0, p90_minutes=1500.0)
    store(Analytics(
        outcomes=[{"kind": "all", **figures}, {"kind": "group", "fingerprint": fingerprint, **figures},
                  {"kind": "origin", "broker": memory_broker[1].name, "origin": "orders", **figures}],
        busiest=[{"kind": "host", "name": "<img src=x onerror=alert(1)>", "broker": "", "letters": 3, "groups": 1}],
        arrivals=[{"weekday": arrived.isoweekday(), "hour": arrived.hour, "letters": 3}],
    ))
    page = signed_in_page

    page.goto("/")
    page.get_by_role("link", name="Analytics").click()
    expect(page.get_by_role("heading", name="Failure analytics")).to_be_visible()
    expect(page.locator(".figures")).to_contain_text("1 h 30 min")
    expect(page.locator(".figures")).to_contain_text("1 d 1 h")
    expect(page.locator("svg.chart a rect.cell")).to_have_count(7 * 24)
    expect(page.get_by_role("table", name="Hosts")).to_contain_text("<img src=x onerror=alert(1)>")
    screenshot(page, "analytics")

    page.locator(f'svg.chart a[href="/letters/?weekday={arrived.isoweekday()}&hour={arrived.hour}"]').click()
    expect(page).to_have_url(re.compile(rf"/letters/\?weekday={arrived.isoweekday()}&hour={arrived.hour}$"))
    expect(page.locator("table.letters tbody tr")).to_have_count(3)

    page.go_back()
    page.locator("table.outcomes").first.get_by_role("link", name=fingerprint).click()
    expect(page).to_have_url(re.compile(rf"/groups/{fingerprint}/$"))
    assert not page.watch.dialogs and not page.watch.errors
