"""From a dead letter to the trace that failed it (issue 34), with clients no one here wrote: a
pika consumer instrumented with opentelemetry-instrumentation-pika and a Celery task with
opentelemetry-instrumentation-celery (tests.traced_clients, each in a process of its own with
the SDK and an in-memory exporter) fail and dead-letter on the real RabbitMQ. The console
captures them; each letter's trace id is the one the client's exporter recorded for the
publish and the failed consumer's span, its span id the consumer's parent. The letter's page
and the lists link it to the tracing UI (DLO_TRACE_URL), and it finds the letter by it: in
/api/letters/ and on the Letters page in Chromium."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client
from playwright.sync_api import expect

from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import DeadLetter
from console.services.brokers import do_add_broker, do_discover
from tests.rabbitmq.kit import MANAGEMENT_URL, PASSWORD, USER, RabbitKit

pytestmark = [pytest.mark.browser, pytest.mark.rabbitmq, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
LINK = "https://tempo.example.com/trace/{trace_id}?span={span_id}"


@pytest.fixture
def kit():
    helper = RabbitKit()
    yield helper
    helper.close()


def client_process(*arguments: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tests.traced_clients", *arguments], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def spans_of(process: subprocess.Popen) -> list[dict]:
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    return json.loads(out)


def dead_letter_queues(kit: RabbitKit, base: str) -> tuple[str, str]:
    work, dlq = kit.name(base), kit.name(base) + ".dlq"
    kit.queue(dlq)
    kit.queue(work, {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})
    return work, dlq


def test_instrumented_clients_letters_show_link_and_find_their_traces(kit, operator, settings, signed_in_page,
                                                                       screenshot):
    settings.DLO_TRACE_URL = LINK
    pika_work, pika_dlq = dead_letter_queues(kit, "payments")
    celery_work, celery_dlq = dead_letter_queues(kit, "charges")
    clients = [client_process("pika", pika_work, "2"), client_process("celery", celery_work, celery_dlq, "2")]
    pika_spans, celery_spans = (spans_of(process) for process in clients)
    kit.wait_depth(pika_dlq, 2)
    kit.wait_depth(celery_dlq, 2)

    broker = do_add_broker(actor="tests", name=f"rabbit-{kit.suffix}", kind="rabbitmq",
                           url=f"amqp://{USER}:{PASSWORD}@127.0.0.1:5672/%2F", management_url=MANAGEMENT_URL)
    places = {p.name: p for p in do_discover(broker, actor=operator)}
    letters = {}
    for dlq in (pika_dlq, celery_dlq):
        assert run_job(request_job("capture", place=places[dlq], actor=operator, reason="triage").pk) == "succeeded"
        letters[dlq] = list(DeadLetter.objects.filter(place=places[dlq]).order_by("id"))
        assert len(letters[dlq]) == 2

    # What the clients' exporters recorded: the failed consumer's span is a child of the span
    # that published the message, in its trace; the letter carries that trace and that span.
    for dlq, spans, consumer_kind in ((pika_dlq, pika_spans, "CONSUMER"), (celery_dlq, celery_spans, "CONSUMER")):
        consumers = [span for span in spans if span["kind"] == consumer_kind]
        assert len(consumers) == 2, spans
        for letter in letters[dlq]:
            (consumer,) = [span for span in consumers if span["parent_span_id"] == letter.span_id]
            assert letter.trace_id == consumer["trace_id"]
            (publisher,) = [span for span in spans if span["span_id"] == letter.span_id]
            assert publisher["kind"] == "PRODUCER" and publisher["trace_id"] == letter.trace_id
    assert {span["name"] for span in celery_spans} == {"apply_async/shop.charge", "run/shop.charge"}
    every = [letter for dlq in letters for letter in letters[dlq]]
    assert len({letter.trace_id for letter in every}) == 4  # one trace per message

    # The API finds each letter by its trace id, and links it.
    api = Client()
    api.force_login(operator)
    for letter in every:
        rows = api.get("/api/letters/", {"trace_id": letter.trace_id}).json()["results"]
        assert [row["id"] for row in rows] == [letter.pk]
        assert rows[0]["trace"]["url"] == LINK.format(trace_id=letter.trace_id, span_id=letter.span_id)
    assert api.get("/api/letters/", {"trace_id": "not-a-trace"}).status_code == 400

    # The Letters page in Chromium: filter by a Celery task's trace id, follow the letter, its link.
    page = signed_in_page
    wanted = letters[celery_dlq][1]
    page.goto("/letters/")
    expect(page.locator("table.letters tbody tr")).to_have_count(4)
    page.get_by_label("Trace id").fill(wanted.trace_id)
    page.get_by_role("button", name="Filter").click()
    rows = page.locator("table.letters tbody tr")
    expect(rows).to_have_count(1)
    expect(page.locator("#matching-count")).to_contain_text("1 letter")
    link = LINK.format(trace_id=wanted.trace_id, span_id=wanted.span_id)
    expect(rows.locator("a.trace")).to_have_attribute("href", link)
    screenshot(page, "letters-by-trace")
    rows.get_by_role("link", name=str(wanted.pk), exact=True).click()
    expect(page.locator("#trace a.trace")).to_have_attribute("href", link)
    expect(page.locator("#trace")).to_contain_text(wanted.span_id)
    page.locator("#trace").get_by_role("link", name="letters of this trace").click()
    expect(page.locator("table.letters tbody tr")).to_have_count(1)
    assert page.watch.errors == [] and page.watch.dialogs == []
