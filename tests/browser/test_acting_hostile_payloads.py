"""Markup in a letter's body and headers stays text in the preview, the edit form and the audit."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import expect

from console.models import AuditEvent
from tests.web.factory import XSS_IMG, XSS_SCRIPT, store_letter

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

HOSTILE = XSS_SCRIPT + XSS_IMG


def _nothing_ran(page) -> None:
    assert page.locator("img").count() == 0
    sources = page.eval_on_selector_all("script", "els => els.map(e => e.getAttribute('src'))")
    assert sources and all(src and src.startswith("/static/") for src in sources)
    assert page.watch.dialogs == [] and page.watch.errors == []


def test_hostile_body_and_headers_are_text_in_preview_edit_form_and_audit(signed_in_page, place, queued_jobs):
    page = signed_in_page
    letter = store_letter(place, HOSTILE.encode(), headers={"x-note": HOSTILE, XSS_IMG: "hostile name"},
                          origin=XSS_IMG, exception_type=XSS_SCRIPT)

    page.goto(f"/places/{place.pk}/")
    page.get_by_label(f"Select letter {letter.pk}", exact=True).check()
    page.get_by_label("Action").select_option("replay")
    page.get_by_role("button", name="Preview…").click()
    expect(page.locator("table.letters tbody td.preview")).to_have_text(HOSTILE)
    expect(page.locator("table.origins tbody")).to_contain_text(XSS_IMG)
    _nothing_ran(page)

    page.goto(f"/letters/{letter.pk}/")
    page.get_by_text("Edit and replay").click()
    expect(page.locator("#edit_body")).to_have_value(HOSTILE)
    assert json.loads(page.locator("#edit_headers").input_value()) == {"x-note": HOSTILE, XSS_IMG: "hostile name"}
    page.locator("#edit_body").fill(HOSTILE + "<b>edited</b>")
    page.locator("#edit_headers").fill(json.dumps({"x-note": XSS_IMG + "!", "x-new": XSS_SCRIPT}))
    page.locator("#edit_reason").fill(XSS_IMG)
    page.get_by_role("button", name="Replay the edited copy").click()
    expect(page.locator("h1")).to_have_text("Preview: replay an edited copy")  # nothing done yet
    expect(page.locator("details.diff")).to_contain_text(f"header added x-new{XSS_SCRIPT}")
    _nothing_ran(page)
    page.get_by_role("button", name="Replay the edited copy").click()
    expect(page.locator("[data-status]")).to_have_text("Queued")
    _nothing_ran(page)
    assert AuditEvent.objects.filter(action="edit_replay", reason=XSS_IMG).exists()

    page.goto("/audit/?action=edit_replay")
    row = page.locator("table.audit tbody tr")
    row.get_by_text("What was edited").click()
    expect(row).to_contain_text(f"header changed x-note{HOSTILE}")  # before → after, both as text
    expect(row).to_contain_text(f"header added x-new{XSS_SCRIPT}")
    expect(row.locator("pre.diff-text")).to_contain_text("+" + HOSTILE + "<b>edited</b>")
    expect(row.locator("td").nth(3)).to_have_text(XSS_IMG)
    assert page.locator("b", has_text="edited").count() == 0
    _nothing_ran(page)
