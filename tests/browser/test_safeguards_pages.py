"""The safeguards in the browser: a letter whose replays died twice shows it is quarantined and
why, with Release and Mark failed; the origins page shows a breaker opened by three letters in
a row with the same exception, its streak and policy, and a person closes it."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from console.brokers.memory.adapter import Message
from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import AuditEvent, DeadLetter, Origin
from tests.web.factory import store_letter

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def quarantined_letters(fake, place, operator, count: int) -> list[DeadLetter]:
    """``count`` letters whose replays died again twice, through capture and replay jobs on the
    memory broker (its consumer "rejects" by moving what the replay put back into the DLQ)."""
    fake.queue("orders.dlq").extend(Message(f'{{"order": {n}}}'.encode(), {"x-origin-queue": "orders"})
                                    for n in range(count))
    for round_ in range(3):
        if round_:
            held = list(DeadLetter.objects.filter(place=place, state="held").values_list("id", flat=True))
            assert run_job(request_job("replay", actor=operator, reason="retry", ids=held).pk) == "succeeded"
            fake.queue("orders.dlq").extend(fake.queue("orders"))
            fake.queue("orders").clear()
        assert run_job(request_job("capture", place=place, actor=operator, reason="triage").pk) == "succeeded"
    letters = list(DeadLetter.objects.filter(place=place, state="held").order_by("id"))
    assert [letter.replay_count for letter in letters] == [2] * count
    return letters


def test_a_quarantined_letter_says_why_and_a_person_releases_one_and_marks_another_failed(
        signed_in_page, operator, place, memory_broker, queued_jobs, screenshot):
    page = signed_in_page
    first, second = quarantined_letters(memory_broker[0], place, operator, 2)

    page.goto(f"/places/{place.pk}/")
    expect(page.locator(".state-quarantined")).to_have_count(2)  # the two returns of the second round
    page.goto(f"/letters/{first.pk}/")
    expect(page.get_by_role("heading", name="Quarantined", exact=True)).to_be_visible()
    expect(page.locator("#quarantine-reason")).to_contain_text("came back 2 times after replays")
    expect(page.locator("#replay-count")).to_have_text("2")
    screenshot(page, "quarantined-letter")
    page.get_by_label("Why release it (for the audit)").fill("the consumer is fixed now")
    page.get_by_role("button", name="Release").click()
    expect(page.get_by_text(f"Letter {first.pk} is released")).to_be_visible()
    expect(page.get_by_role("heading", name="Quarantined", exact=True)).to_have_count(0)
    assert DeadLetter.objects.get(pk=first.pk).quarantined_at is None
    assert AuditEvent.objects.get(action="release").reason == "the consumer is fixed now"

    page.goto(f"/letters/{second.pk}/")
    page.get_by_role("button", name="Mark failed").click()
    page.get_by_role("button", name=re.compile(r"^Mark failed: 1 letter")).click()
    expect(page).to_have_url(re.compile(r"/jobs/\d+/$"))
    assert run_job(queued_jobs[-1]) == "succeeded"
    assert DeadLetter.objects.get(pk=second.pk).state == "failed"
    assert page.watch.errors == [] and page.watch.dialogs == []


def test_the_origins_page_shows_an_open_breaker_and_a_person_closes_it(
        signed_in_page, place, screenshot):
    page = signed_in_page
    for n in range(3):
        store_letter(place, f'{{"order": {n}}}'.encode(), origin="orders", exception_type="CardDeclined")
    store_letter(place, b"{}", origin="billing", exception_type="Timeout")
    orders = Origin.objects.get(name="orders")

    page.goto("/origins/")
    row = page.locator(f"#origin-{orders.pk}")
    expect(row.locator(".breaker")).to_contain_text("open")
    expect(row.locator(".breaker")).to_contain_text("3 letters in a row failed with CardDeclined")
    expect(row.locator(".streak")).to_contain_text("3 in a row, the last 3 with CardDeclined")
    expect(row.locator(".policy")).to_have_text("not told by the broker")
    billing = page.locator(f"#origin-{Origin.objects.get(name='billing').pk}")
    expect(billing.locator(".breaker")).to_have_text("closed")
    expect(billing.get_by_role("button", name="Close breaker")).to_have_count(0)
    screenshot(page, "origins")

    row.get_by_label("Reason (for the audit)").fill("card processor is back")
    row.get_by_role("button", name="Close breaker").click()
    expect(page.get_by_text("The breaker of orders is closed")).to_be_visible()
    expect(page.locator(f"#origin-{orders.pk} .breaker")).to_have_text("closed")
    assert AuditEvent.objects.get(action="breaker_close").reason == "card processor is back"
    assert page.watch.errors == [] and page.watch.dialogs == []
