"""A letter's page acts on it: choose Replay to origin, preview the one letter, confirm, and
watch the job succeed; the letter's page then says it was replayed."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from console.jobs.door.runner import run_job
from console.models import DeadLetter
from tests.web.factory import store_letter

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_replay_a_letter_from_its_page_and_see_the_job_succeed(signed_in_page, place, memory_broker, queued_jobs,
                                                              screenshot):
    page = signed_in_page
    letter = store_letter(place, b'{"order": 41, "currency": "XXX"}')
    store_letter(place, b'{"order": 42}')  # the place's other letter stays held

    page.goto(f"/letters/{letter.pk}/")
    actions = page.locator("#letter-actions")
    expect(actions.get_by_role("group", name="Act on this letter")).to_be_visible()
    expect(actions.get_by_label("Target queue (move)")).to_be_hidden()  # only a move asks for one
    actions.get_by_label("Action").select_option("move")
    expect(actions.get_by_label("Target queue (move)")).to_be_visible()
    actions.get_by_label("Action").select_option("replay")
    actions.get_by_label("Reason (for the audit)").fill("currency table fixed")
    screenshot(page, "letter-actions")
    actions.get_by_role("button", name="Preview…").click()

    expect(page.get_by_role("heading", name="Preview: replay to origin")).to_be_visible()
    expect(page.locator("#preview-count")).to_have_text("1")
    page.get_by_role("button", name="Replay to origin: 1 letter").click()
    expect(page).to_have_url(re.compile(r"/jobs/\d+/$"))
    (job_id,) = queued_jobs
    assert run_job(job_id) == "succeeded"
    expect(page.locator("[data-status]")).to_have_text("Succeeded")

    assert [message.body for message in memory_broker[0].queue("orders")] == [b'{"order": 41, "currency": "XXX"}']
    assert DeadLetter.objects.get(pk=letter.pk).state == "replayed"
    page.goto(f"/letters/{letter.pk}/")
    expect(page.locator("h1 .state")).to_have_text("replayed")
    expect(page.locator("#letter-actions")).to_have_count(0)
    assert page.watch.errors == [] and page.watch.dialogs == []
