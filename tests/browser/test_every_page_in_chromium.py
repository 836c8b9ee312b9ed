"""Every page of the console, opened in Chromium by an admin on a console holding a letter, a job,
a rule, a channel and a redaction rule: no console error, no uncaught error and no
Content-Security-Policy violation, the partials its htmx loads included (each page is left until
its requests are done). The URLs are the URL conf's own (tests/access/test_every_url_by_role's
walk), so a new page is opened without anyone adding it here; the API's JSON, downloads and
POST-only URLs are not pages and are left out by what they answer, as are the htmx partials
asked for directly (a fragment is not a document; each is checked inside the page that loads
it)."""

from __future__ import annotations

import pytest

from console.brokers.memory.adapter import Message
from console.jobs.door.requests import request_job
from console.models import Origin
from console.services.channels import do_add_channel
from console.services.objectives import do_set_objective
from console.services.redaction import do_set_redaction_rule
from console.services.rules import do_create_rule
from console.services.saved_views import do_save_view
from tests.access.test_every_url_by_role import every_url, filled
from tests.web.factory import memory_place, store_letter, uploaded_mapping, uploaded_schema

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True), pytest.mark.role("admin")]

#: Runs before any page script: records every CSP violation the page reports.
RECORD_VIOLATIONS = """
window.__violations = [];
document.addEventListener('securitypolicyviolation',
    e => window.__violations.push(e.violatedDirective + ' ' + e.blockedURI));
"""


@pytest.fixture
def ids(memory_broker, operator) -> dict[str, int | str]:
    """One real object for each keyword a URL takes (olga, the operator fixture, is an admin here)."""
    fake, broker = memory_broker
    place = memory_place(memory_broker)
    fake.queue("orders.dlq").append(Message(b'{"still": "on the broker"}'))
    letter = store_letter(place, b'{"order": 1, "card": "4111 1111 1111 1111"}')
    job = request_job("mark_failed", actor=operator, reason="walked", ids=[letter.pk])
    redaction = do_set_redaction_rule(actor="tests", kind="header", pattern="authorization")
    rule = do_create_rule(actor=operator, name="hold orders", match={"origin": "orders"}, action={"kind": "hold"},
                          position=10, enabled=False, reason="walked")
    origin = Origin.objects.get(broker=broker, name=letter.origin_queue)
    channel = do_add_channel(actor="tests", name="ops", kind="webhook", target="http://127.0.0.1:9/hook")
    return {"broker_id": broker.pk, "place_id": place.pk, "letter_id": letter.pk, "job_id": job.pk,
            "rule_id": rule.pk, "redaction_rule_id": redaction.pk, "user_id": operator.pk, "origin_id": origin.pk,
            "fingerprint": letter.fingerprint, "channel_id": channel.pk,
            "view_id": do_save_view(actor=operator, name="held ones", filter={"state": "held"}).pk,
            "objective_id": do_set_objective(actor=operator, name="an hour", kind="oldest", seconds=3600,
                                             place=place).pk,
            "body_schema_id": uploaded_schema().pk, "body_mapping_id": uploaded_mapping().pk}


def pages(ids: dict[str, int | str]) -> list[str]:
    """Every URL of the URL conf but the REST API's (its docs page excepted), filled with ``ids``."""
    urls = []
    for _name, route in every_url():
        if route.startswith("api/") and not route.startswith("api/docs"):
            continue
        if route.startswith(("admin/", "static/", "metrics")):
            continue
        urls.append(filled(route, ids))
    return sorted(set(urls))


def test_every_page_opens_without_an_error_or_a_violation(signed_in_page, ids):
    page = signed_in_page
    page.context.add_init_script(RECORD_VIOLATIONS)
    opened, problems = [], []
    for url in pages(ids):
        answer = page.request.get(url, max_redirects=0)
        if answer.status != 200 or not answer.headers.get("content-type", "").startswith("text/html"):
            continue  # a POST-only URL, a redirect, a download or JSON: not a page
        if "<html" not in answer.text()[:4000].lower():
            continue  # an htmx partial: walked inside the page that loads it
        page.watch.errors.clear()
        page.goto(url)
        try:
            page.wait_for_load_state("networkidle", timeout=5_000)
        except Exception:  # noqa: BLE001 - a page that polls on: what it did so far is checked
            pass
        violations = page.evaluate("window.__violations")
        if page.watch.errors or violations:
            problems.append((url, list(page.watch.errors), violations))
        opened.append(url)
    assert problems == []
    assert page.watch.dialogs == []
    # The walk reached the pages that matter (the inventory, a place, a letter, a job, the rules,
    # the API docs), and the error pages have their own test (test_error_pages_in_chromium).
    for expected in ("/", f"/places/{ids['place_id']}/", f"/letters/{ids['letter_id']}/", f"/jobs/{ids['job_id']}/",
                     "/rules/", "/api/docs/"):
        assert expected in opened, (expected, opened)
    assert len(opened) >= 20, opened
