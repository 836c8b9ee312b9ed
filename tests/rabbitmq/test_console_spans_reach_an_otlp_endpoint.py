"""The console's own telemetry (issue 34, point 4), seen where a collector would see it: a real
Celery worker with the standard OTEL_EXPORTER_OTLP_ENDPOINT set replays two dead letters from
the real RabbitMQ, and a real OTLP/HTTP endpoint on loopback (tests.otlp_receiver, decoding
with opentelemetry-proto) receives the replay job's span under the Celery task's, with its
children: the PostgreSQL statements and the replay batch, whose context each replayed message
carries as its new traceparent and whose links point at the trace each letter failed in
(DLO_REPLAY_TRACE=link, point 3), unless a redaction rule masks that trace. No byte of what was
received holds a body, or a header value that a redaction rule masks. A capture job's batches
are spans under its own, with the statements that stored them.
"""

from __future__ import annotations

import pytest

from console.jobs.door.requests import request_job
from console.models import Job
from console.services.brokers import do_discover
from console.services.redaction import do_set_redaction_rule
from console.tracing.replay import FAILED_CONTEXT_HEADER
from tests.access.masked_value import CARD, CARD_RULE, leaks

pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db(transaction=True)]

FAILED_TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
FAILED_SPAN = "00f067aa0ba902b7"
#: A trace whose id the site's redaction rule masks (it holds the card number's digits).
MASKED_TRACE = CARD + "abcdefabcdefabcd"
BODY_MARK = b"body-words-no-span-may-hold"


def test_a_replay_jobs_span_and_its_children_reach_the_endpoint_without_content(
        captured, kit, operator, traced_worker, receiver):
    do_set_redaction_rule(actor="tests", kind=CARD_RULE[0], pattern=CARD_RULE[1])
    work, place, (traced, plain, masked) = captured("orders", [
        (b'{"card": "' + CARD.encode() + b'", "note": "' + BODY_MARK + b'"}',
         {"traceparent": f"00-{FAILED_TRACE}-{FAILED_SPAN}-01", "x-card": CARD}),
        (BODY_MARK, {"x-card": CARD}),
        (b"masked trace", {"traceparent": f"00-{MASKED_TRACE}-{FAILED_SPAN}-01", "x-card": CARD}),
    ])

    job = request_job("replay", actor=operator, reason="fixed the parser", ids=[traced.id, plain.id, masked.id])
    traced_worker.finish(job)
    assert job.status == Job.Status.SUCCEEDED, traced_worker.explain(job, "the replay did not succeed")

    def job_span(spans):
        return next((s for s in spans if s.name == "job replay" and s.attributes.get("dlo.job.id") == job.pk), None)

    span = receiver.wait_for(job_span, "the replay job's span")
    assert span.resource["service.name"] == "dlo-under-test" and span.resource["dlo.process"] == "worker"
    assert {key: span.attributes[key] for key in ("dlo.job.kind", "dlo.job.status", "dlo.job.total",
                                                  "dlo.job.done", "dlo.job.failed")} == {
        "dlo.job.kind": "replay", "dlo.job.status": "succeeded", "dlo.job.total": 3, "dlo.job.done": 3,
        "dlo.job.failed": 0}

    def children(spans):
        found = [s for s in spans if s.parent_span_id == span.span_id]
        return found if any(s.name == "replay publish" for s in found) else None

    below = receiver.wait_for(children, "the job span's children")
    assert all(child.trace_id == span.trace_id for child in below)
    statements = [child for child in below if child.attributes.get("db.system") in ("postgresql", "postgres")]
    assert statements, f"no PostgreSQL statement under the job: {[child.name for child in below]}"
    # The Celery instrumentation's span of the task that ran the job is the job span's parent (it
    # ends after the job span, so it may come in a later export).
    task = receiver.wait_for(lambda spans: next((s for s in spans if s.span_id == span.parent_span_id), None),
                             "the job span's parent, the Celery task's span")
    assert task.name.startswith("run/") and task.attributes.get("celery.task_name") == "console.run_job"

    (batch,) = [child for child in below if child.name == "replay publish"]
    assert (batch.attributes["messaging.batch.message_count"], batch.attributes["dlo.replay.confirmed"],
            batch.attributes["dlo.replay.trace"]) == (3, 3, "link")
    # One link: the letter without a trace has none, and the masked trace is not named.
    assert batch.links == [(FAILED_TRACE, FAILED_SPAN, {"dlo.letter.id": traced.id})]

    # What the consumer gets: the batch span's context, and the failed one kept beside it.
    replayed = {message.body: message.headers for message in kit.drain(work)}
    assert len(replayed) == 3
    for headers in replayed.values():
        version, trace_id, span_id, flags = headers["traceparent"].split("-")
        assert (version, trace_id, span_id, int(flags, 16) & 1) == ("00", batch.trace_id, batch.span_id, 1)
        assert headers["x-card"] == CARD  # the message itself is replayed as it was
    traced_headers = next(h for body, h in replayed.items() if body.startswith(b'{"card"'))
    assert traced_headers[FAILED_CONTEXT_HEADER] == f"00-{FAILED_TRACE}-{FAILED_SPAN}-01"
    assert FAILED_CONTEXT_HEADER not in replayed[BODY_MARK]
    # The message itself keeps its failed trace: masking is for readers, not for the consumer.
    assert replayed[b"masked trace"][FAILED_CONTEXT_HEADER] == f"00-{MASKED_TRACE}-{FAILED_SPAN}-01"

    received = receiver.everything()
    assert receiver.paths and set(receiver.paths) == {"/v1/traces"}
    assert leaks(received) == [], "a masked header value reached a span"
    assert BODY_MARK not in received, "a message body reached a span"
    assert bytes.fromhex(MASKED_TRACE) not in received, "a masked trace reached a span"


def test_a_capture_jobs_batches_are_spans_under_its_own(kit, rabbit_broker, operator, traced_worker, receiver):
    dlq = kit.queue(kit.name("billing") + ".dlq")
    work = kit.queue(kit.name("billing"), {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})
    for number in range(3):
        kit.publish(work, BODY_MARK + str(number).encode(), headers={"x-card": CARD})
    kit.reject(work, count=3)
    kit.wait_depth(dlq, 3)
    (place,) = [p for p in do_discover(rabbit_broker, actor=operator) if p.name == dlq]

    job = request_job("capture", place=place, actor=operator, reason="triage")
    traced_worker.finish(job)
    assert job.status == Job.Status.SUCCEEDED, traced_worker.explain(job, "the capture did not succeed")

    def capture_spans(spans):
        jobs = [s for s in spans if s.name == "job capture" and s.attributes.get("dlo.job.id") == job.pk]
        batches = [s for s in spans if jobs and s.name == "capture batch" and s.parent_span_id == jobs[0].span_id]
        return (jobs[0], batches) if batches else None

    span, batches = receiver.wait_for(capture_spans, "the capture job's span and its batches")
    assert span.attributes["dlo.job.done"] == 3
    assert sum(batch.attributes["dlo.capture.stored"] for batch in batches) == 3
    stored = [s for s in receiver.spans if s.parent_span_id in {batch.span_id for batch in batches}]
    assert any(s.attributes.get("db.system") in ("postgresql", "postgres") for s in stored)
    received = receiver.everything()
    assert leaks(received) == [] and BODY_MARK not in received
