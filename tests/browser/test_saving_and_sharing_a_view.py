"""Issue 51 in Chromium: an operator filters the Letters page, saves the filter as a view shared
with everyone, opens it again from the navigation's Views menu (with its count), and renames it
(a name holding a script is shown as text); then sets an objective on the place from its page
and sees its state on the inventory."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from console.models import AuditEvent, SavedView
from tests.web.factory import memory_place, store_letter

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_save_a_view_share_it_open_it_from_the_navigation_and_see_an_objective_on_the_inventory(
        signed_in_page, memory_broker, screenshot):
    place = memory_place(memory_broker)
    billing = [store_letter(place, b'{"n": 1}', origin="billing", exception_type="TimeoutError").pk
               for _ in range(3)]
    store_letter(place, b'{"n": 2}', origin="shipping", exception_type="KeyError")
    page = signed_in_page

    page.goto("/letters/?origin=billing")
    expect(page.locator("#matching-count")).to_contain_text("3 letters match")
    page.get_by_text("Save this filter as a view").click()
    form = page.get_by_role("form", name="Save as a view")
    form.get_by_label("Name").fill("Billing <script>alert('x')</script>")
    form.get_by_label("Description").fill("every morning")
    form.get_by_label("Shared with").select_option("everyone")
    form.get_by_role("button", name="Save view").click()
    expect(page.get_by_role("heading", name="Billing <script>alert('x')</script>")).to_be_visible()
    expect(page.locator("#view-about")).to_contain_text("shared with everyone")
    expect(page.locator("#matching-count")).to_contain_text("3 letters match")
    view = SavedView.objects.get()
    assert view.filter == {"origin": "billing"} and view.sharing == "everyone"

    page.goto("/groups/")
    page.locator("nav").get_by_text("Views").click()
    link = page.locator("#views-menu").get_by_role("link", name="Billing")
    expect(link).to_contain_text("3")
    link.click()
    expect(page).to_have_url(re.compile(rf"/views/{view.pk}/$"))
    for letter_id in billing:
        expect(page.get_by_role("link", name=str(letter_id), exact=True)).to_be_visible()
    screenshot(page, "saved_view")

    change = page.get_by_role("form", name="Change the view")
    change.get_by_label("Name").fill("Billing")
    change.get_by_role("button", name="Save").click()
    expect(page.get_by_role("heading", name="Billing", exact=True)).to_be_visible()
    assert list(AuditEvent.objects.filter(action__startswith="view.").order_by("id").values_list(
        "action", flat=True)) == [
        "view.saved", "view.changed"]

    # An objective on the place, set from its page, and its state on the inventory.
    page.goto(f"/places/{place.pk}/")
    page.get_by_text("Set an objective").click()
    objective = page.get_by_role("form", name="Set an objective")
    objective.get_by_label("Name", exact=True).fill("an hour")
    objective.get_by_label("Minutes (D)").fill("60")
    objective.get_by_role("button", name="Set the objective").click()
    expect(page.locator("table.objectives")).to_contain_text("no letter waits longer than 3600 s")
    page.goto("/")
    expect(page.get_by_role("link", name="an hour: met")).to_be_visible()
    screenshot(page, "objective_on_the_inventory")
    assert not page.watch.dialogs and not page.watch.errors
