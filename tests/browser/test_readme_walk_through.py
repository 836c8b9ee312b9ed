"""The README's "first ten minutes", step by step, on the demo's second start (the first without
RabbitMQ, the second on RabbitMQ, in a vhost of its own)
in Chromium: sign in, open a DLQ, open a letter, replay it from its page and see it succeed, open
its failure group and act on its letters, ask for a purge and approve it as demo-reviewer, open
/api/docs/ and see the operations, open Analytics and see figures (the demo ran the pipeline once,
on Spark). If the README's steps change, this test changes with them."""

from __future__ import annotations

import re
import uuid
from io import StringIO

import httpx
import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from console.jobs.door.runner import run_job
from console.models import DeadLetter, Job

pytestmark = [pytest.mark.browser, pytest.mark.approvals, pytest.mark.django_db(transaction=True)]

MANAGEMENT = "http://127.0.0.1:15672"
GUEST = ("guest", "guest")
PASSWORD = "dead-letters-demo"  # the README's


@pytest.fixture
def demo_on_rabbitmq():
    """``manage.py demo --analytics`` on a vhost of its own of the real RabbitMQ, as a user who sees
    only that vhost (so discovery finds the demo's DLQs and no other test's)."""
    vhost = user = f"dlo-walk-{uuid.uuid4().hex[:8]}"
    httpx.put(f"{MANAGEMENT}/api/vhosts/{vhost}", auth=GUEST).raise_for_status()
    httpx.put(f"{MANAGEMENT}/api/users/{user}", auth=GUEST,
              json={"password": user, "tags": "management"}).raise_for_status()
    httpx.put(f"{MANAGEMENT}/api/permissions/{vhost}/{user}", auth=GUEST,
              json={"configure": ".*", "write": ".*", "read": ".*"}).raise_for_status()
    # A second start (issue 46): the first found no RabbitMQ and kept the letters on the memory
    # broker; this one finds it, and the walk must show what the README says all the same.
    call_command("demo", "--no-rabbitmq", stdout=StringIO())
    printed = StringIO()
    call_command("demo", "--analytics", "--rabbitmq-url", f"amqp://{user}:{user}@127.0.0.1:5672/{vhost}",
                 "--management-url", f"http://{user}:{user}@127.0.0.1:15672/", stdout=printed)
    # On RabbitMQ itself, not the memory broker the demo falls back to when none answers.
    assert "letters now wait in the DLQs" in printed.getvalue(), printed.getvalue()
    assert "demo letters in custody: 12" in printed.getvalue(), printed.getvalue()
    yield vhost
    httpx.delete(f"{MANAGEMENT}/api/vhosts/{vhost}", auth=GUEST)
    httpx.delete(f"{MANAGEMENT}/api/users/{user}", auth=GUEST)


def _sign_in(page, username: str) -> None:
    page.goto("/sign-in/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("link", name="Inventory")).to_be_visible()


def _job_on_this_page(page) -> Job:
    expect(page).to_have_url(re.compile(r"/jobs/\d+/$"))
    return Job.objects.get(pk=int(page.url.rstrip("/").rsplit("/", 1)[1]))


def _run_and_see_it_succeed(page, job: Job) -> None:
    assert run_job(job.pk) == "succeeded"
    expect(page.locator("[data-status]")).to_have_text("Succeeded")


def test_the_first_ten_minutes(page, demo_on_rabbitmq, queued_jobs):
    # 1. Sign in as demo: the inventory lists the demo's DLQs.
    _sign_in(page, "demo")
    expect(page.get_by_role("link", name="demo.billing.dlq")).to_be_visible()

    # 2-3. Open a DLQ, then a letter.
    page.get_by_role("link", name="demo.billing.dlq").first.click()
    page.locator("table a[href*='/letters/']").first.click()
    letter = DeadLetter.objects.get(pk=int(re.search(r"/letters/(\d+)/", page.url).group(1)))
    expect(page.get_by_role("heading", name=f"Letter {letter.pk}")).to_be_visible()

    # 4. Replay it from the letter's page; the job succeeds and the letter says replayed.
    actions = page.locator("#letter-actions")
    actions.get_by_label("Action").select_option("replay")
    actions.get_by_label("Reason (for the audit)").fill("fixed the currency table")
    actions.get_by_role("button", name="Preview…").click()
    page.get_by_role("button", name="Replay to origin: 1 letter").click()
    _run_and_see_it_succeed(page, _job_on_this_page(page))
    page.goto(f"/letters/{letter.pk}/")
    expect(page.locator("h1 .state").first).to_have_text("replayed")

    # 5. Open its failure group (from the groups page) and act on its letters: all matching, replayed.
    page.get_by_role("link", name="Failure groups").click()
    group_of_two = DeadLetter.objects.get(message_id="ORD-1009").fingerprint  # two declined cards
    page.locator(f"a[href='/groups/{group_of_two}/']").first.click()
    expect(page.get_by_role("heading", name="Letters")).to_be_visible()
    page.get_by_label(re.compile(r"Select all 2 matching")).check()
    page.get_by_label("Action").select_option("replay")
    page.get_by_label("Reason (for the audit)").fill("the card processor is back")
    page.get_by_role("button", name="Preview…").click()
    page.get_by_role("button", name="Replay to origin: 2 letters").click()
    _run_and_see_it_succeed(page, _job_on_this_page(page))
    assert set(DeadLetter.objects.filter(fingerprint=group_of_two).values_list("state", flat=True)) == {"replayed"}

    # 6. Ask for a purge of demo.shipping.dlq; it waits for demo-reviewer, who approves it.
    page.get_by_role("link", name="Inventory").click()
    page.get_by_role("link", name="demo.shipping.dlq").first.click()
    page.get_by_label(re.compile(r"Select all 4 matching")).check()
    page.get_by_label("Action").select_option("purge")
    # The visible one: a RabbitMQ place's page also has the whole-queue move, folded away.
    page.get_by_role("textbox", name="Reason (for the audit)").fill("demo: clear the shipping DLQ")
    page.get_by_role("button", name="Preview…").click()
    page.get_by_label("Type demo.shipping.dlq to purge").fill("demo.shipping.dlq")
    page.get_by_role("button", name="Purge: 4 letters").click()
    purge = _job_on_this_page(page)
    assert purge.status == "awaiting_approval" and purge.pk not in queued_jobs
    expect(page.get_by_text("another admin must approve it")).to_be_visible()
    page.get_by_role("button", name="Sign out").click()
    _sign_in(page, "demo-reviewer")
    page.get_by_role("link", name="Approvals").click()
    page.locator(f"a[href='/jobs/{purge.pk}/']").first.click()
    page.get_by_label("Reason (required to refuse)").fill("checked: test orders only")
    page.get_by_role("button", name="Approve").click()
    expect(page.get_by_text(f"Job {purge.pk} approved")).to_be_visible()
    assert queued_jobs[-1] == purge.pk
    _run_and_see_it_succeed(page, purge)

    # 7. The API's documentation lists its operations (Settings, then API).
    page.get_by_text("Settings", exact=True).click()
    page.get_by_role("link", name="API", exact=True).click()
    expect(page).to_have_url(re.compile(r"/api/docs/$"))
    expect(page.locator("#swagger-ui .opblock-summary-path[data-path='/api/jobs/']").first).to_be_visible()

    # 8. Analytics shows the figures the demo's pipeline run computed: its twelve letters.
    page.get_by_role("link", name="Analytics", exact=True).click()
    letters = page.locator("dl.figures > div").filter(has=page.locator("dt", has_text=re.compile("^Letters$")))
    expect(letters.locator("dd")).to_have_text("12")

    assert page.watch.errors == [] and page.watch.dialogs == []
