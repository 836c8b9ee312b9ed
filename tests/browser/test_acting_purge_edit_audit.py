"""Purge with the typed confirmation, edit and replay one letter, and find all of it in the audit."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from console.jobs.door.runner import run_job
from console.models import DeadLetter
from tests.web.factory import store_letter

# Brokers and purges are the admin's (console.access.roles).
pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.role("admin")]


def test_purge_with_the_typed_name_then_edit_and_replay_then_read_the_audit(
    signed_in_page, place, memory_broker, queued_jobs, screenshot
):
    page = signed_in_page
    fake, _ = memory_broker
    junk = [store_letter(place, f"junk {i}".encode()).pk for i in range(3)]
    keeper = store_letter(place, b'{"order": 5, "currency": "XXX"}', headers={"x-tenant": "acme"}).pk

    # Purge two ticked letters: a wrong (case) name is refused, the exact name goes through.
    page.goto(f"/places/{place.pk}/")
    page.get_by_label(f"Select letter {junk[0]}", exact=True).check()
    page.get_by_label(f"Select letter {junk[1]}", exact=True).check()
    page.get_by_label("Action").select_option("purge")
    page.get_by_role("button", name="Preview…").click()
    expect(page.locator("#preview-count")).to_have_text("2")
    page.get_by_label("Reason (for the audit)").fill("test junk from the load test")
    page.get_by_label(f"Type {place.name} to purge").fill(place.name.upper())
    page.get_by_role("button", name="Purge: 2 letters").click()
    expect(page.get_by_role("alert")).to_contain_text("The name does not match (it is case-sensitive)")
    assert queued_jobs == []
    page.get_by_label(f"Type {place.name} to purge").fill(place.name)
    page.get_by_role("button", name="Purge: 2 letters").click()
    expect(page).to_have_url(re.compile(r"/jobs/\d+/$"))
    (purge_job,) = queued_jobs
    assert run_job(purge_job) == "succeeded"
    expect(page.locator("[data-status]")).to_have_text("Succeeded")
    assert [DeadLetter.objects.get(pk=pk).state for pk in junk] == ["purged", "purged", "held"]

    # Edit and replay the keeper: body and one header changed in the browser.
    page.goto(f"/letters/{keeper}/")
    page.get_by_text("Edit and replay").click()
    body = page.locator("#edit_body")
    expect(body).to_have_value('{\n  "order": 5,\n  "currency": "XXX"\n}')  # shown laid out for editing
    body.fill('{"order": 5, "currency": "EUR"}')
    page.locator("#edit_headers").fill('{"x-tenant": "acme-eu", "x-fixed": true}')
    page.locator("#edit_reason").fill("currency typo")
    screenshot(page, "edit-form")
    page.get_by_role("button", name="Replay the edited copy").click()
    expect(page.locator("#edit-destination")).to_contain_text("orders")  # the preview, first
    expect(page.locator("details.diff")).to_contain_text("header changed x-tenant")
    page.get_by_role("button", name="Replay the edited copy").click()
    expect(page).to_have_url(re.compile(r"/jobs/\d+/$"))
    edit_job = queued_jobs[-1]
    assert run_job(edit_job) == "succeeded"
    expect(page.locator(".counts")).to_contain_text("1 done")
    (delivered,) = fake.queue("orders")
    assert delivered.body == b'{"order": 5, "currency": "EUR"}' and delivered.headers["x-tenant"] == "acme-eu"
    page.goto(f"/letters/{keeper}/")
    expect(page.locator("h1 .state")).to_have_text("failed")
    expect(page.locator(".lineage-list")).to_contain_text("replayed")
    screenshot(page, "letter-lineage")

    # The audit lists the purge, the edit with its diff, and the replay of the copy.
    page.get_by_role("link", name="Audit").click()
    rows = page.locator("table.audit tbody tr")
    for action in ("purge", "edit_replay", "replay", "job.requested"):
        named = page.locator("code", has_text=re.compile(f"^{re.escape(action)}$"))
        expect(rows.filter(has=named).first).to_be_visible()
    edit_row = rows.filter(has=page.locator("code", has_text=re.compile("^edit_replay$")))
    edit_row.get_by_text("What was edited").click()
    expect(edit_row).to_contain_text("header changed x-tenant")
    expect(edit_row).to_contain_text("header added x-fixed")
    expect(edit_row.locator("pre.diff-text")).to_contain_text('+{"order": 5, "currency": "EUR"}')
    screenshot(page, "audit")
    page.get_by_label("Action").fill("purge")
    page.get_by_label("Place").fill(place.name)
    page.get_by_role("button", name="Filter").click()
    expect(rows).to_have_count(1)
    expect(rows).to_contain_text("test junk from the load test")
    rows.get_by_role("link", name=re.compile(r"letters of event")).click()
    expect(page.locator("table.letters tbody tr")).to_have_count(2)
    assert page.watch.errors == [] and page.watch.dialogs == []
