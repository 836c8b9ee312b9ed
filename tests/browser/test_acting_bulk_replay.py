"""Sign in, select all matching, preview (the frozen count, per origin), replay, and watch the
job's progress bar fill by itself; a screenshot is taken while the job is mid-way."""

from __future__ import annotations

import re
import threading

import pytest
from django.db import connection
from playwright.sync_api import expect

from console.brokers.memory.adapter import MemoryAdapter
from console.jobs.door.runner import run_job
from console.models import AuditEvent, DeadLetter, Job
from tests.web.factory import store_letter

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def _sign_in(page) -> None:
    page.goto("/")
    page.get_by_label("Username").fill("olga")
    page.get_by_label("Password").fill("triage-pass-123")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Inventory")).to_be_visible()


class HeldAfterFirstBatch:
    """Makes the memory broker stop after its first publish until the test lets it go on."""

    def __init__(self, monkeypatch) -> None:
        self.first_batch_done = threading.Event()
        self.go_on = threading.Event()
        original = MemoryAdapter.publish

        def publish(adapter, outgoing, **kwargs):
            if self.first_batch_done.is_set():
                self.go_on.wait(timeout=20)
            results = original(adapter, outgoing, **kwargs)
            self.first_batch_done.set()
            return results

        monkeypatch.setattr(MemoryAdapter, "publish", publish)


def test_select_all_matching_preview_replay_and_watch_the_bar_reach_done(
    page, operator, place, memory_broker, queued_jobs, screenshot, settings, monkeypatch
):
    fake, _ = memory_broker
    fake.queue("billing")
    for i in range(6):
        store_letter(place, f'{{"order": {i}, "currency": "XXX"}}'.encode(), origin="orders" if i < 4 else "billing")
    store_letter(place, b'{"order": 99, "currency": "EUR"}')
    _sign_in(page)

    page.goto(f"/places/{place.pk}/?q=XXX")
    page.get_by_label("Select all 6 matching").check()
    page.get_by_label("Action").select_option("replay")
    page.get_by_label("Reason (for the audit)").fill("currency table fixed, INC-77")
    page.get_by_role("button", name="Preview…").click()

    expect(page.get_by_role("heading", name="Preview: replay to origin")).to_be_visible()
    expect(page.locator("#preview-count")).to_have_text("6")
    expect(page.locator("table.origins tbody tr")).to_have_count(2)
    expect(page.get_by_role("row", name=re.compile(r"^mem orders orders 4$"))).to_be_visible()
    expect(page.get_by_role("row", name=re.compile(r"^mem billing billing 2$"))).to_be_visible()
    expect(page.locator("table.letters tbody tr")).to_have_count(6)
    late = store_letter(place, b'{"order": 7, "currency": "XXX"}')  # arrives while the operator reads
    page.get_by_role("button", name="Check again").click()  # (the count also refreshes by itself)
    expect(page.locator("#arrived-count")).to_contain_text("1 new matching letter arrived since this preview")
    expect(page.get_by_label("Reason (for the audit)")).to_have_value("currency table fixed, INC-77")
    screenshot(page, "preview")
    assert not Job.objects.exists()

    page.get_by_role("button", name="Replay to origin: 6 letters").click()
    expect(page).to_have_url(re.compile(r"/jobs/\d+/$"))
    (job_id,) = queued_jobs
    expect(page.locator("[data-status]")).to_have_text("Queued")
    page.evaluate("window.dloNotReloaded = true")

    settings.DLO_BATCH_SIZE = 2
    held = HeldAfterFirstBatch(monkeypatch)
    outcome: list[str] = []

    def work() -> None:
        try:
            outcome.append(run_job(job_id))
        finally:
            connection.close()

    worker = threading.Thread(target=work)
    worker.start()
    try:
        assert held.first_batch_done.wait(timeout=20)
        expect(page.locator("[data-status]")).to_have_text("Running")
        expect(page.locator("#job-bar")).to_have_attribute("value", "2")
        expect(page.get_by_role("button", name="Pause")).to_be_visible()
        screenshot(page, "job-running")
    finally:
        held.go_on.set()
        worker.join(timeout=30)
    assert outcome == ["succeeded"]

    expect(page.locator("[data-status]")).to_have_text("Succeeded")
    expect(page.locator("#job-bar")).to_have_attribute("value", "6")
    expect(page.locator(".counts")).to_contain_text("6 done")
    expect(page.locator(".counts")).to_contain_text("0 returned after replay")
    expect(page.get_by_role("button", name="Cancel job")).to_have_count(0)
    assert page.evaluate("window.dloNotReloaded") is True
    screenshot(page, "job-replayed")

    assert sorted(m.body for m in fake.queue("orders"))[0].startswith(b'{"order": 0')
    assert len(fake.queue("orders")) == 4 and len(fake.queue("billing")) == 2
    assert DeadLetter.objects.get(pk=late.pk).state == "held"  # arrived after the preview: left alone
    assert AuditEvent.objects.filter(action="replay", job_id=job_id).count() == 3  # one per batch
    assert page.watch.errors == [] and page.watch.dialogs == []
