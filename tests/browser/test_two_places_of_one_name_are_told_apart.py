"""Issue 46 in Chromium: two brokers each with a place named ``orders.dlq``. Every list (letters,
failure groups, jobs), a preview, a job's page, a rule's scope and the audit's rows name the
broker beside the place, so the two are told apart."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from console.brokers.memory.adapter import MemoryBroker
from console.jobs.door.requests import request_job
from console.services.brokers import do_add_broker
from console.services.rules import do_create_rule
from tests.web.factory import memory_place, store_letter

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.role("admin")]


@pytest.fixture
def twins(memory_broker, operator):
    MemoryBroker.instances.pop("eu", None)
    eu = do_add_broker(actor="tests", name="mem-eu", kind="memory", url="memory://eu")
    places = [memory_place(memory_broker), memory_place((MemoryBroker.named("eu"), eu))]
    assert {place.name for place in places} == {"orders.dlq"}
    for place in places:
        store_letter(place, exception_type="com.shop.OrderClosed")
        request_job("mark_failed", actor=operator, reason="told apart", filter={"place": place.pk})
    do_create_rule(actor=operator, name="hold eu orders", match={"origin": "orders"}, action={"kind": "hold"},
                   scope={"place": places[1].pk}, position=10, enabled=False, reason="told apart")
    yield places
    MemoryBroker.instances.pop("eu", None)


NAMES = ("mem / orders.dlq", "mem-eu / orders.dlq")


def _both(page, where: str = "main") -> None:
    for name in NAMES:
        expect(page.locator(where).first).to_contain_text(name)


def test_every_list_preview_job_rule_and_audit_row_names_the_broker(signed_in_page, twins, queued_jobs):
    page = signed_in_page
    page.goto("/letters/")
    _both(page, "table")
    page.goto("/groups/")
    expect(page.get_by_role("link", name="Show these letters in mem / orders.dlq")).to_be_visible()
    expect(page.get_by_role("link", name="Show these letters in mem-eu / orders.dlq")).to_be_visible()
    page.goto("/jobs/")
    _both(page, "table")
    page.goto("/rules/")
    expect(page.locator("main")).to_contain_text("mem-eu / orders.dlq")
    page.goto("/audit/")
    _both(page, "table")

    page.goto(f"/places/{twins[1].pk}/")
    expect(page.locator(".crumbs")).to_contain_text("mem-eu")
    page.get_by_label("Select all").check()
    page.get_by_label("Action").select_option("mark_failed")
    page.get_by_label("Reason (for the audit)").fill("preview names the broker")
    page.get_by_role("button", name=re.compile("Preview")).click()
    expect(page.locator(".preview-summary")).to_contain_text("mem-eu / orders.dlq")
    page.get_by_role("button", name=re.compile(": 1 letter$")).click()
    expect(page).to_have_url(re.compile(r"/jobs/\d+/$"))
    expect(page.locator("dl.facts")).to_contain_text("mem-eu / orders.dlq")
