"""Looking at failures in Chromium: the dashboard refreshes itself, filters by exception and
age, the failure groups lead to their letters, and the charts are drawn."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone
from playwright.sync_api import expect

from console.models import Broker, DeadLetter, DeadPlace, PlaceSample
from console.web.views import inventory
from tests.web.factory import XSS_IMG, XSS_SCRIPT, memory_place, store_letter

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _samples(place: DeadPlace, hours: int = 6) -> None:
    """One sample every five minutes, a depth that climbs and is drained once."""
    now = timezone.now()
    rows = []
    for step in range(hours * 12, -1, -1):
        depth = (hours * 12 - step) % 40 + step // 20
        rows.append(PlaceSample(place=place, at=now - timedelta(minutes=5 * step), depth=depth, held=depth // 2,
                                arrivals=(step * 7) % 5))
    PlaceSample.objects.bulk_create(rows)


def _failures(place: DeadPlace) -> None:
    for n in range(5):
        store_letter(place, b'{"order": %d, "currency": "XTS"}' % n, exception_type="java.lang.IllegalStateException",
                     exception_message=f"Order {n} is already closed", headers={"tenant": "acme"})
    for n in range(3):
        store_letter(place, b"read timed out", exception_type="java.net.SocketTimeoutException",
                     exception_message=f"Read timed out after {n}000 ms", origin="orders")
    store_letter(place, b'{"order": 99}', reason="expired")
    old = store_letter(place, XSS_SCRIPT.encode(), exception_type="KeyError", exception_message=XSS_IMG)
    DeadLetter.objects.filter(pk=old.pk).update(captured_at=timezone.now() - timedelta(days=2))


def test_the_dashboard_refreshes_itself(signed_in_page, place, memory_broker, monkeypatch, screenshot):
    monkeypatch.setattr(inventory, "REFRESH_SECONDS", 1)
    page = signed_in_page
    _samples(place)
    _failures(place)
    Broker.objects.create(name="prod-rabbit", kind="rabbitmq", url="amqp://rabbit.internal:5672/",
                          reachable=False, last_error="connection refused (rabbit.internal:5672)")
    page.goto("/")
    down = page.locator("section.broker", has_text="prod-rabbit")
    expect(down.locator(".health-down")).to_have_text("down")
    expect(down).to_contain_text("Last error: connection refused")
    screenshot(page, "dashboard")

    reason = page.get_by_label(f"Reason to capture {place.name}")
    reason.fill("INC-9 half typed")
    _, broker = memory_broker
    newcomer = DeadPlace.objects.create(broker=broker, name="payments.dlq", discovered_by="convention")
    PlaceSample.objects.create(place=newcomer, at=timezone.now(), depth=7, held=0, arrivals=7)
    # No reload: htmx polls the partial and the new place appears with its sample.
    expect(page.get_by_role("link", name="payments.dlq")).to_be_visible(timeout=8_000)
    expect(page.get_by_role("img", name="Arrivals in payments.dlq over the last hour")).to_be_attached()
    expect(reason).to_have_value("INC-9 half typed")  # what the operator was typing survives
    assert page.watch.errors == [] and page.watch.dialogs == []


def test_filter_by_exception_and_by_age(signed_in_page, place, screenshot):
    page = signed_in_page
    _samples(place)
    _failures(place)
    page.goto(f"/places/{place.pk}/")
    # Samples over six hours and a letter two days old: hourly buckets, every letter counted.
    expect(page.get_by_role("img", name=f"Depth of {place.name}, per hour")).to_be_visible()
    expect(page.get_by_role("img", name=f"Arrivals in {place.name}, per hour")).to_be_visible()
    expect(page.locator(".chart-reading").nth(1)).to_contain_text("10 letters captured since")
    screenshot(page, "place-with-chart")
    rows = page.locator("table.letters tbody tr")
    expect(rows).to_have_count(10)

    page.get_by_label("Exception type").fill("java.net.SocketTimeoutException")
    page.get_by_label("Exception type").press("Enter")  # the keyboard submits the filter
    expect(page).to_have_url(re.compile(r"exception=java\.net\.SocketTimeoutException"))
    expect(rows).to_have_count(3)

    page.get_by_role("link", name="Clear").click()
    page.get_by_label("Older than").select_option(label="1 day")
    page.get_by_role("button", name="Filter").click()
    expect(page).to_have_url(re.compile(r"older_than=24"))
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("KeyError")
    expect(rows.first).to_contain_text(XSS_SCRIPT)  # shown as text
    assert page.watch.errors == [] and page.watch.dialogs == []


def test_from_a_failure_group_to_its_letters(signed_in_page, place, memory_broker, screenshot):
    page = signed_in_page
    _failures(place)
    other = memory_place(memory_broker, origin="payments")
    store_letter(other, b"{}", origin="payments", exception_type="java.lang.IllegalStateException",
                 exception_message="Order 1 is already closed")
    page.goto("/")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Failure groups").click()
    expect(page.get_by_role("heading", name="Failure groups, all places")).to_be_visible()
    groups = page.locator("table.groups tbody tr")
    expect(groups.first).to_contain_text("java.lang.IllegalStateException")
    expect(groups.first.locator("td.num")).to_have_text("5")
    expect(page.get_by_role("img", name=re.compile("Letters per day in the 5 largest groups"))).to_be_visible()
    screenshot(page, "groups")

    groups.first.get_by_role("link", name="Show these letters in mem / orders.dlq").click()
    expect(page).to_have_url(re.compile(r"/places/\d+/\?fingerprint=[0-9a-f]+&state=held$"))
    expect(page.locator("table.letters tbody tr")).to_have_count(5)
    expect(page.get_by_label("Failure group")).to_have_value(re.compile("^[0-9a-f]{16}$"))

    page.go_back()
    groups.first.get_by_role("link", name="Act on all in mem / orders.dlq").click()
    expect(page.get_by_label("Select all 5 matching")).to_be_checked()
    # The bulk flow takes it from here: the preview names exactly this group's letters.
    page.get_by_label("Reason (for the audit)").fill("INC-12 order closed twice")
    page.get_by_role("button", name="Preview").click()
    expect(page.locator("#preview-count")).to_have_text("5")
    expect(page.locator(".preview-summary")).to_contain_text("fingerprint=")
    assert page.watch.errors == [] and page.watch.dialogs == []
