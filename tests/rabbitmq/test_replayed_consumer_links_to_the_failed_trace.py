"""A replay and the trace a consumer's retry belongs to (issue 34, point 3), with clients no one
here wrote: a producer and a consumer on pika, each channel instrumented by
opentelemetry-instrumentation-pika with an in-memory exporter. The consumer rejects the
message into its dead-letter queue, the console captures and replays it, the same consumer
takes it again, and its span says where the retry belongs, by DLO_REPLAY_TRACE:

- ``link``: a new trace, whose span links to the failed one; the link is made by the
  instrumentation's ``consume_hook`` from ``x-dlo-failed-traceparent``, as the README shows a
  consumer how. With the console's telemetry on (a real worker exporting to an OTLP/HTTP
  endpoint on loopback), the retry's parent is the replay batch's span, which links back too;
- ``keep``: the failed trace itself, under the producer's span, as before the failure;
- ``none``: a trace of its own with no parent and no link.
"""

from __future__ import annotations

import time

import pika
import pytest
from opentelemetry import trace
from opentelemetry.instrumentation.pika import PikaInstrumentor
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import DeadLetter
from console.services.brokers import do_discover
from console.tracing.replay import FAILED_CONTEXT_HEADER, replay_mode
from tests.rabbitmq.kit import PASSWORD, USER

pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db]


def link_to_the_failed_trace(span, body: bytes, properties) -> None:
    """The consumer's recipe (README, Traces): a replayed message names the trace it failed in."""
    failed = (properties.headers or {}).get(FAILED_CONTEXT_HEADER)
    if isinstance(failed, str):
        context = trace.get_current_span(TraceContextTextMapPropagator().extract({"traceparent": failed}))
        span.add_link(context.get_span_context())


class PikaApp:
    """The application around the console: one pika connection, its channel instrumented."""

    def __init__(self) -> None:
        self.spans = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(self.spans))
        self.connection = pika.BlockingConnection(pika.ConnectionParameters(
            "127.0.0.1", 5672, credentials=pika.PlainCredentials(USER, PASSWORD)))
        self.channel = self.connection.channel()
        PikaInstrumentor.instrument_channel(self.channel, tracer_provider=provider,
                                            consume_hook=link_to_the_failed_trace)

    def publish(self, queue: str, body: bytes) -> None:
        self.channel.basic_publish("", queue, body, pika.BasicProperties(headers={"x-order": "7"}))

    def take_one(self, queue: str, *, reject: bool) -> pika.BasicProperties:
        """Consume one message, rejecting it (requeue=False: it dead-letters) or acking it."""
        taken: list[pika.BasicProperties] = []

        def handle(channel, method, properties, body) -> None:
            if reject:
                channel.basic_reject(method.delivery_tag, requeue=False)
            else:
                channel.basic_ack(method.delivery_tag)
            taken.append(properties)

        tag = self.channel.basic_consume(queue, handle)
        deadline = time.monotonic() + 20
        while not taken and time.monotonic() < deadline:
            self.connection.process_data_events(time_limit=0.1)
        self.channel.basic_cancel(tag)
        assert taken, f"nothing to consume in {queue}"
        return taken[0]

    def close(self) -> None:
        self.connection.close()


@pytest.fixture
def app():
    application = PikaApp()
    yield application
    application.close()


@pytest.fixture
def replay_trace(monkeypatch):
    """Sets DLO_REPLAY_TRACE for the replay run in this process."""
    def set_mode(mode: str) -> None:
        monkeypatch.setenv("DLO_REPLAY_TRACE", mode)
        replay_mode.cache_clear()

    yield set_mode
    replay_mode.cache_clear()


@pytest.mark.parametrize("mode", ["link", "keep", "none"])
def test_the_consumers_retry_after_a_replay(mode, kit, rabbit_broker, operator, app, replay_trace):
    replay_trace(mode)
    dlq = kit.queue(kit.name("orders") + ".dlq")
    work = kit.queue(kit.name("orders"), {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})
    app.publish(work, b'{"order": 7}')
    app.take_one(work, reject=True)
    kit.wait_depth(dlq, 1)
    producer, failed = app.spans.get_finished_spans()
    assert (producer.name, failed.name) == (f"{work} send", f"{work} receive")
    original = producer.context
    assert failed.context.trace_id == original.trace_id and failed.parent.span_id == original.span_id

    (place,) = [p for p in do_discover(rabbit_broker, actor=operator) if p.name == dlq]
    assert run_job(request_job("capture", place=place, actor=operator, reason="triage").pk) == "succeeded"
    letter = DeadLetter.objects.get(place=place)
    assert run_job(request_job("replay", actor=operator, reason="fixed", ids=[letter.id]).pk) == "succeeded"

    properties = app.take_one(work, reject=False)
    retry = app.spans.get_finished_spans()[-1]
    assert retry.name == f"{work} receive" and retry is not failed
    assert properties.headers["x-order"] == "7"
    links = [(link.context.trace_id, link.context.span_id) for link in retry.links]
    if mode == "link":
        assert retry.context.trace_id != original.trace_id, "the retry continued the failed trace"
        assert retry.parent is not None and retry.parent.trace_id == retry.context.trace_id
        assert properties.headers["traceparent"] == (
            f"00-{retry.context.trace_id:032x}-{retry.parent.span_id:016x}-01")
        assert links == [(original.trace_id, original.span_id)]
    elif mode == "keep":
        assert retry.context.trace_id == original.trace_id and retry.parent.span_id == original.span_id
        assert links == [] and FAILED_CONTEXT_HEADER not in properties.headers
    else:
        assert retry.parent is None and retry.context.trace_id != original.trace_id
        assert links == [] and "traceparent" not in properties.headers
        assert FAILED_CONTEXT_HEADER not in properties.headers


@pytest.mark.django_db(transaction=True)
def test_the_retrys_parent_is_the_consoles_replay_span_which_links_to_the_failure(
        kit, rabbit_broker, operator, app, traced_worker, receiver):
    """With the console's telemetry on, the whole way back: the retry's parent is the span of
    the replay's batch (received by an OTLP/HTTP endpoint from a real worker), which links to
    the trace the consumer failed in."""
    dlq = kit.queue(kit.name("orders") + ".dlq")
    work = kit.queue(kit.name("orders"), {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})
    app.publish(work, b'{"order": 8}')
    app.take_one(work, reject=True)
    kit.wait_depth(dlq, 1)
    producer, _ = app.spans.get_finished_spans()
    (place,) = [p for p in do_discover(rabbit_broker, actor=operator) if p.name == dlq]
    assert run_job(request_job("capture", place=place, actor=operator, reason="triage").pk) == "succeeded"
    letter = DeadLetter.objects.get(place=place)

    job = request_job("replay", actor=operator, reason="fixed", ids=[letter.id])
    traced_worker.finish(job)
    assert job.status == "succeeded", traced_worker.explain(job, "the replay did not succeed")
    app.take_one(work, reject=False)
    retry = app.spans.get_finished_spans()[-1]

    batch = receiver.wait_for(lambda spans: next(
        (s for s in spans if s.name == "replay publish" and s.attributes.get("dlo.job.id") == job.pk), None),
        "the replay batch's span")
    assert (f"{retry.context.trace_id:032x}", f"{retry.parent.span_id:016x}") == (batch.trace_id, batch.span_id)
    assert batch.links == [(f"{producer.context.trace_id:032x}", f"{producer.context.span_id:016x}",
                            {"dlo.letter.id": letter.id})]
    assert [(link.context.trace_id, link.context.span_id) for link in retry.links] == [
        (producer.context.trace_id, producer.context.span_id)]
