"""Issue 46 in Chromium: outcomes that tell the truth.

- A replay whose letters go partly to an origin the broker no longer has ends "partly failed",
  its page lists the failed letters with the broker's reason, and "Retry the 2 failed letters"
  goes through the usual preview to a new job of exactly those two.
- A job page left open while a second person refuses the purge turns "Refused" by itself (htmx
  polling), with no "waiting for approval" left beside it."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from console.access.roles import ADMIN, set_role
from console.jobs.door.approvals import do_refuse
from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import Job
from tests.web.factory import memory_place, store_letter

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_partly_failed_replay_lists_its_failed_letters_and_retries_them(signed_in_page, operator,
                                                                          memory_broker, queued_jobs):
    page = signed_in_page
    fake, _ = memory_broker
    place = memory_place(memory_broker, origin="orders")
    good = [store_letter(place, b'{"n": 1}', origin="orders"), store_letter(place, b'{"n": 2}', origin="orders")]
    lost = [store_letter(place, b'{"n": 3}', origin="billing.gone"), store_letter(place, b'{"n": 4}',
                                                                                origin="billing.gone")]
    job = request_job("replay", actor=operator, reason="after the fix", ids=[letter.pk for letter in good + lost])
    assert run_job(job.pk) == "partly_failed"

    page.goto(f"/jobs/{job.pk}/")
    expect(page.locator("[data-status]")).to_have_text("partly failed")
    failed = page.locator("#failed-letters")
    expect(failed).to_contain_text("billing.gone")
    page.get_by_role("button", name="Retry the 2 failed letters…").click()
    expect(page.locator("#preview-count")).to_have_text("2")
    page.get_by_role("button", name=re.compile(r": 2 letters$")).click()
    expect(page).to_have_url(re.compile(r"/jobs/\d+/$"))
    retry = Job.objects.exclude(pk=job.pk).get()
    assert (retry.kind, sorted(retry.selection["ids"])) == ("replay", sorted(letter.pk for letter in lost))
    assert page.watch.errors == []


@pytest.mark.approvals
@pytest.mark.role("admin")
def test_an_open_job_page_turns_refused_when_a_second_person_refuses(signed_in_page, operator, memory_broker,
                                                                    django_user_model):
    page = signed_in_page
    place = memory_place(memory_broker, origin="orders")
    store_letter(place, b"{}")
    job = request_job("purge", actor=operator, reason="old test data", filter={"place": place.pk})
    page.goto(f"/jobs/{job.pk}/")
    expect(page.locator("[data-status]")).to_have_text(re.compile("awaiting approval", re.I))

    second = django_user_model.objects.create_user("rita", password="x-pass-123456")
    set_role(second, ADMIN)
    do_refuse(job, actor=second, reason="these are customer orders")

    expect(page.locator("[data-status]")).to_have_text("Refused", timeout=10_000)  # no reload by the test
    expect(page.locator("main")).to_contain_text("Refused by rita")
    expect(page.locator("main")).not_to_contain_text("must approve")
    assert page.watch.errors == []
