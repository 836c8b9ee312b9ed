"""An operator makes a handling rule in the browser: saves a draft (a ladder typed as
"seconds x tries"), presses "Dry run" and sees, without a reload, how many held letters it would
act on and which; enables it; the audit records the dry run's numbers with the enabling."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from console.models import AuditEvent, Rule
from tests.web.factory import memory_place, store_letter

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_draft_dry_run_and_enable_a_rule(signed_in_page, memory_broker, screenshot):
    place = memory_place(memory_broker)
    declined = [store_letter(place, b'{"card": "declined"}', exception_type="com.acme.CardDeclined") for _ in range(2)]
    store_letter(place, b'{"sku": null}', exception_type="KeyError")
    page = signed_in_page

    page.goto("/")
    page.get_by_role("link", name="Rules").click()
    expect(page.get_by_text("No rules yet")).to_be_visible()
    form = page.get_by_role("form", name="New rule")
    form.get_by_label("Name").fill("card declined")
    form.get_by_label("Match (JSON)").fill('{"exception_type": "CardDeclined$"}')
    form.get_by_label("Action").select_option("retry")
    form.get_by_label("Ladder", exact=True).fill("1x2, 60x1")
    form.get_by_label("Then").select_option("mark_failed")
    form.get_by_label("Reason (for the audit)").fill("declines clear up")
    form.get_by_role("button", name="Save as draft").click()
    expect(page.get_by_text("saved as a draft")).to_be_visible()
    row = page.locator("tr.rule", has_text="card declined")
    expect(row).to_contain_text("retries 2 × 1 s, 1 × 1 min, then mark failed")
    expect(row).to_contain_text("draft")

    row.get_by_role("button", name="Dry run").click()
    result = page.get_by_role("status").filter(has_text="would act on")
    expect(result).to_contain_text("would act on 2 held letters: retry 2")
    expect(result.get_by_role("link")).to_have_count(2)
    assert sorted(int(t.strip("#")) for t in result.get_by_role("link").all_inner_texts()) == [d.pk for d in declined]
    screenshot(page, "rules_dry_run")

    row.get_by_role("button", name="Enable").click()
    expect(page.locator("tr.rule", has_text="card declined")).to_contain_text("enabled by olga")
    rule = Rule.objects.get(name="card declined")
    assert rule.enabled
    assert rule.action["ladder"] == [{"delay_seconds": 1, "tries": 2}, {"delay_seconds": 60, "tries": 1}]
    enabled = AuditEvent.objects.get(action="rule.enabled")
    assert enabled.details["dry_run"]["matched"] == 2 and enabled.actor_name == "olga"
    assert not page.watch.errors and not page.watch.dialogs
