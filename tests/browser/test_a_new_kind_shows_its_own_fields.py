"""In Chromium, the place page's action menu shows a registered kind's own field (the copy kind
of tests/kinds_for_tests) only while that kind is chosen, and the target queue for the kinds
that ask for one (actions.js reads which actions ask each field from the page)."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from console.jobs.kinds import register, unregister
from tests.web.factory import store_letter

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def copy_kind():
    register("copy", "tests.kinds_for_tests.copy_kind.Copy")
    yield
    unregister("copy")


def test_each_field_shows_for_the_actions_that_ask_for_it(copy_kind, signed_in_page, place):
    page = signed_in_page
    store_letter(place, b"order 1")
    page.goto(f"/places/{place.pk}/")
    note, target = page.locator("#action_note"), page.locator("#action_target")
    page.get_by_label("Action").select_option("replay")
    expect(note).to_be_hidden()
    expect(target).to_be_hidden()
    page.get_by_label("Action").select_option("copy")
    expect(note).to_be_visible()
    expect(target).to_be_visible()
    page.get_by_label("Action").select_option("move")
    expect(note).to_be_hidden()
    expect(target).to_be_visible()
