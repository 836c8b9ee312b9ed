"""Markup and script in everything a broker hands us (body, headers, exception, origin and
place names, the broker's own name) stays text on every page that shows it: no dialog, no
console error, no Content Security Policy violation, no element or link made from it."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from console.brokers.memory.adapter import MemoryBroker
from console.jobs.door.requests import request_job
from console.models import Broker
from console.services.brokers import do_add_broker, do_discover
from tests.web.factory import store_letter

pytestmark = [pytest.mark.browser, pytest.mark.approvals, pytest.mark.django_db(transaction=True)]

SCRIPT = "<script>alert('script')</script>"
IMG = "<img src=x onerror=alert('img')>"
LINK = "javascript:alert('link')"
TEXTAREA = "</textarea><script>alert('textarea')</script>"
ALL = SCRIPT + IMG + LINK + TEXTAREA

#: Runs before any page script: records every CSP violation the page reports.
RECORD_VIOLATIONS = """
window.__violations = [];
document.addEventListener('securitypolicyviolation',
    e => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
"""


@pytest.fixture
def hostile(operator):
    """A broker, a place and a letter made of payloads; a purge of it waiting for approval."""
    MemoryBroker.instances.pop("hostile", None)
    fake = MemoryBroker.named("hostile")
    broker = do_add_broker(actor="tests", name="hostile", kind="memory", url="memory://hostile")
    # Broker names are slugs when added; a row may still hold anything (an old or forged row).
    Broker.objects.filter(pk=broker.pk).update(name=SCRIPT + IMG)
    broker.refresh_from_db()
    fake.queue(TEXTAREA)
    fake.queue(f"{TEXTAREA}.dlq")
    place = next(p for p in do_discover(broker, actor="tests") if p.name == f"{TEXTAREA}.dlq")
    letter = store_letter(
        place, ALL.encode(), origin=TEXTAREA, reason=IMG, exception_type=SCRIPT, exception_message=ALL,
        headers={"x-link": LINK, IMG: SCRIPT, "x-close": TEXTAREA},
    )
    job = request_job("purge", actor=f"script {SCRIPT}", reason=ALL, ids=[letter.pk])
    yield broker, place, letter, job
    MemoryBroker.instances.pop("hostile", None)


def _nothing_ran(page, url: str) -> None:
    assert page.watch.dialogs == [], url
    assert page.watch.errors == [], url
    assert page.evaluate("window.__violations") == [], url
    sources = page.eval_on_selector_all("script", "els => els.map(e => e.getAttribute('src'))")
    assert all(src and src.startswith("/static/") for src in sources), url
    assert page.locator("[onerror], img[src='x'], a[href^='javascript:']").count() == 0, url


def test_every_page_that_shows_a_hostile_letter_keeps_it_text(signed_in_page, hostile, screenshot):
    broker, place, letter, job = hostile
    page = signed_in_page
    page.context.add_init_script(RECORD_VIOLATIONS)
    pages = [
        "/", f"/brokers/{broker.pk}/", f"/places/{place.pk}/", f"/places/{place.pk}/groups/", "/groups/",
        "/letters/", f"/letters/{letter.pk}/", "/jobs/", f"/jobs/{job.pk}/", "/approvals/", "/audit/",
        "/tokens/",
    ]
    for url in pages:
        response = page.goto(url)
        assert response.status == 200, url
        page.wait_for_load_state("networkidle")
        _nothing_ran(page, url)
    page.goto("/audit/")
    expect(page.locator("table.audit")).to_contain_text(ALL)  # the purge's reason, as text

    # The job waiting for approval shows the frozen preview: the sample's body as text.
    page.goto(f"/jobs/{job.pk}/")
    expect(page.locator("section.approval td.preview")).to_contain_text(SCRIPT + IMG)
    _nothing_ran(page, "job awaiting approval")

    # The bulk-action preview.
    page.goto(f"/places/{place.pk}/")
    expect(page.locator("main")).to_contain_text(TEXTAREA)
    page.get_by_label(f"Select letter {letter.pk}", exact=True).check()
    page.get_by_label("Action").select_option("mark_failed")
    page.get_by_role("button", name="Preview…").click()
    expect(page.locator("table.letters tbody td.preview")).to_contain_text(SCRIPT + IMG)
    _nothing_ran(page, "preview")

    # The edit form: the body and headers sit whole inside their textareas.
    page.goto(f"/letters/{letter.pk}/")
    page.get_by_text("Edit and replay").click()
    expect(page.locator("#edit_body")).to_have_value(ALL)
    assert json.loads(page.locator("#edit_headers").input_value()) == {"x-link": LINK, IMG: SCRIPT, "x-close": TEXTAREA}
    _nothing_ran(page, "edit form")
    screenshot(page, "security-hostile-letter-edit-form")
