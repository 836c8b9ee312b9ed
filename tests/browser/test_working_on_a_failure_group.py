"""Operators work on a failure group from the browser: from the groups page to the group's
page, set its status, owner and tags, add a note holding a script (shown as text, nothing runs),
see both on the timeline, and find the group again by filtering the groups page by status."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from console.models import AuditEvent
from tests.web.factory import memory_place, store_letter

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_status_owner_tags_and_a_hostile_note(signed_in_page, memory_broker, screenshot):
    place = memory_place(memory_broker)
    store_letter(place, b'{"n": 1}', exception_type="TimeoutError", exception_message="slow")
    other = store_letter(place, b'{"n": 2}', exception_type="KeyError", exception_message="sku")
    page = signed_in_page

    page.goto("/groups/")
    page.locator("tr", has_text="TimeoutError").get_by_role("link", name="new").click()
    form = page.get_by_role("form", name="Change the group")
    form.get_by_label("Status").select_option("investigating")
    form.get_by_label("Owner (username)").fill("olga")
    form.get_by_label("Tags (comma separated)").fill("billing, urgent")
    form.get_by_label("Why (for the audit)").fill("the vendor's gateway times out")
    form.get_by_role("button", name="Save").click()
    expect(page.get_by_role("heading", name="Status investigating, owned by olga billing urgent")).to_be_visible()
    page.get_by_role("textbox", name="Note").fill("<script>alert('x')</script> waiting for the vendor")
    page.get_by_role("button", name="Add note").click()
    expect(page.get_by_text("<script>alert('x')</script> waiting for the vendor")).to_be_visible()
    expect(page.locator(".timeline li")).to_have_count(2)
    screenshot(page, "group_work")

    page.goto("/groups/?status=investigating")
    expect(page.locator("table.groups tbody tr")).to_have_count(1)
    expect(page.locator("table.groups")).to_contain_text("TimeoutError")
    page.goto("/groups/?status=new")
    expect(page.locator("table.groups")).to_contain_text("KeyError")
    expect(page.locator("table.groups")).not_to_contain_text("TimeoutError")
    assert other.fingerprint
    actions = AuditEvent.objects.filter(action__startswith="group.").order_by("id").values_list("action", flat=True)
    assert list(actions) == ["group.changed", "group.note"]
    assert AuditEvent.objects.get(action="group.changed").reason == "the vendor's gateway times out"
    assert not page.watch.dialogs and not page.watch.errors
