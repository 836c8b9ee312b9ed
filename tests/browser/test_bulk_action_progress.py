"""Select all matching, mark them failed with a reason, and watch the job finish by polling."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from console.jobs.door.runner import run_job
from console.models import AuditEvent, DeadLetter
from tests.web.factory import store_letter

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_mark_all_matching_failed_and_the_progress_bar_fills_without_a_reload(
    signed_in_page, place, queued_jobs, screenshot
):
    page = signed_in_page
    matching = [store_letter(place, f"order {i} is malformed".encode()).pk for i in range(4)]
    spared = store_letter(place, b"order 99 is fine").pk

    page.goto(f"/places/{place.pk}/?q=malformed")
    page.get_by_label("Select all 4 matching").check()
    page.get_by_label("Action").select_option("mark_failed")
    page.get_by_label("Reason (for the audit)").fill("schema v1 is gone, INC-42")
    page.get_by_role("button", name="Preview…").click()
    page.get_by_role("button", name="Mark failed: 4 letters").click()

    expect(page).to_have_url(re.compile(r"/jobs/\d+/$"))
    (job_id,) = queued_jobs
    assert page.url.endswith(f"/jobs/{job_id}/")
    expect(page.locator("[data-status]")).to_have_text("Queued")
    page.evaluate("window.dloNotReloaded = true")

    assert run_job(job_id) == "succeeded"

    expect(page.locator("[data-status]")).to_have_text("Succeeded")
    bar = page.locator("#job-bar")
    expect(bar).to_have_attribute("max", "4")
    expect(bar).to_have_attribute("value", "4")
    expect(page.locator(".counts")).to_contain_text("4 done")
    expect(page.get_by_role("button", name="Cancel job")).to_have_count(0)
    assert page.evaluate("window.dloNotReloaded") is True
    screenshot(page, "job")

    assert set(DeadLetter.objects.filter(pk__in=matching).values_list("state", flat=True)) == {"failed"}
    assert DeadLetter.objects.get(pk=spared).state == "held"
    event = AuditEvent.objects.get(action="mark_failed")
    assert event.letter_ids == matching and event.actor_name == "olga" and event.reason == "schema v1 is gone, INC-42"
    assert page.watch.errors == []
