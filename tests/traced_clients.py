"""Applications no one here wrote, instrumented with OpenTelemetry's official instrumentations,
whose messages fail and dead-letter on the real RabbitMQ (127.0.0.1:5672). Each runs in a process
of its own, with the SDK and an in-memory exporter, and prints what its exporter recorded as
JSON: one object per span (name, kind, trace and span ids in hex, parent span id, links).

    python -m tests.traced_clients pika <work queue> <count>
        publishes ``count`` messages with pika (opentelemetry-instrumentation-pika) and consumes
        them with an instrumented consumer that fails each and rejects it (requeue=False).
    python -m tests.traced_clients dramatiq <queue> <count>
        sends ``count`` messages to a Dramatiq actor (opentelemetry-instrumentor-dramatiq: the
        context rides in the message's options, in its JSON body) that fails them, without
        retries: Dramatiq's RabbitMQ broker declares ``<queue>`` dead-lettering into ``<queue>.XQ``.
    python -m tests.traced_clients celery <work queue> <dead-letter queue> <count>
        sends ``count`` tasks with Celery (opentelemetry-instrumentation-celery) and runs them
        in a worker of the same process; the task fails and rejects its message (acks_late,
        Reject(requeue=False)).

The work queue dead-letters to its dead-letter queue (``x-dead-letter-exchange`` ""): the test
declares both before starting a pika or Celery client.
"""

from __future__ import annotations

import json
import os
import sys
import time

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

HOST, USER, PASSWORD = "127.0.0.1", "guest", "guest"


def _exporter() -> InMemorySpanExporter:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)
    return exporter


def _recorded(exporter: InMemorySpanExporter) -> list[dict]:
    return [{
        "name": span.name,
        "kind": span.kind.name,
        "trace_id": trace.format_trace_id(span.context.trace_id),
        "span_id": trace.format_span_id(span.context.span_id),
        "parent_span_id": trace.format_span_id(span.parent.span_id) if span.parent else "",
        "links": [trace.format_trace_id(link.context.trace_id) for link in span.links],
    } for span in exporter.get_finished_spans()]


def run_pika(work: str, count: int) -> list[dict]:
    import pika
    from opentelemetry.instrumentation.pika import PikaInstrumentor

    exporter = _exporter()
    PikaInstrumentor().instrument()
    params = pika.ConnectionParameters(host=HOST, credentials=pika.PlainCredentials(USER, PASSWORD))
    connection = pika.BlockingConnection(params)
    channel = connection.channel()
    channel.confirm_delivery()
    for number in range(count):
        channel.basic_publish("", work, json.dumps({"order": number}).encode(),
                              pika.BasicProperties(content_type="application/json", message_id=f"pika-{number}"))
    failed = 0

    def fail(ch, method, properties, body) -> None:
        nonlocal failed
        # The consumer's work fails; it gives the message up, and the queue dead-letters it.
        ch.basic_reject(method.delivery_tag, requeue=False)
        failed += 1
        if failed == count:
            ch.stop_consuming()

    channel.basic_qos(prefetch_count=1)
    channel.basic_consume(work, fail)
    channel.start_consuming()
    connection.close()
    return _recorded(exporter)


def run_celery(work: str, dlq: str, count: int) -> list[dict]:
    from celery import Celery
    from celery.contrib.testing.worker import start_worker
    from celery.exceptions import Reject
    from kombu import Connection, Queue
    from opentelemetry.instrumentation.celery import CeleryInstrumentor

    exporter = _exporter()
    CeleryInstrumentor().instrument()
    app = Celery("traced", broker=f"amqp://{USER}:{PASSWORD}@{HOST}:5672//", backend=None)
    app.conf.update(
        task_queues=[Queue(work, routing_key=work, durable=False,
                           queue_arguments={"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})],
        task_default_queue=work, task_acks_late=True, worker_prefetch_multiplier=1,
        broker_connection_retry_on_startup=True, worker_hijack_root_logger=False,
    )

    @app.task(name="shop.charge", acks_late=True, bind=True)
    def charge(self, order: int) -> None:
        raise Reject(f"card declined for order {order}", requeue=False)

    def finished() -> bool:
        """Every task dead-lettered, and its run span ended (the worker rejects the message
        before the span ends)."""
        with Connection(app.conf.broker_url) as connection:
            dead = connection.default_channel.queue_declare(dlq, passive=True).message_count
        runs = [span for span in exporter.get_finished_spans() if span.name.startswith("run/")]
        return dead >= count and len(runs) >= count

    # The worker runs in a thread of this process; the process ends without stopping it (its
    # shutdown waits on the broker for seconds, and nothing it does then is recorded).
    worker = start_worker(app, pool="solo", perform_ping_check=False, loglevel="WARNING")
    worker.__enter__()
    for number in range(count):
        charge.apply_async((number,), task_id=f"celery-{number}")
    deadline = time.monotonic() + 60
    while not finished():
        if time.monotonic() > deadline:
            raise SystemExit(f"the tasks never dead-lettered into {dlq}")
        time.sleep(0.1)
    return _recorded(exporter)


def run_dramatiq(queue: str, count: int) -> list[dict]:
    import dramatiq
    import pika
    from dramatiq.brokers.rabbitmq import RabbitmqBroker
    from opentelemetry_instrumentor_dramatiq import DramatiqInstrumentor

    exporter = _exporter()
    broker = RabbitmqBroker(host=HOST, credentials=pika.PlainCredentials(USER, PASSWORD))
    dramatiq.set_broker(broker)
    DramatiqInstrumentor().instrument()

    @dramatiq.actor(actor_name="ship", queue_name=queue, max_retries=0)
    def ship(order: int) -> None:
        raise RuntimeError(f"no courier for order {order}")

    for number in range(count):
        ship.send(number)
    worker = dramatiq.Worker(broker, worker_threads=1)
    worker.start()
    # Dramatiq gives a message up by rejecting it; its queue dead-letters it into <queue>.XQ.
    connection = pika.BlockingConnection(pika.ConnectionParameters(
        host=HOST, credentials=pika.PlainCredentials(USER, PASSWORD)))
    deadline = time.monotonic() + 60
    while connection.channel().queue_declare(f"{queue}.XQ", passive=True).method.message_count < count:
        if time.monotonic() > deadline:
            raise SystemExit(f"the messages never dead-lettered into {queue}.XQ")
        time.sleep(0.1)
    connection.close()
    return _recorded(exporter)


if __name__ == "__main__":
    kind, *arguments = sys.argv[1:]
    if kind == "pika":
        spans = run_pika(arguments[0], int(arguments[1]))
    elif kind == "dramatiq":
        spans = run_dramatiq(arguments[0], int(arguments[1]))
    elif kind == "celery":
        spans = run_celery(arguments[0], arguments[1], int(arguments[2]))
    else:
        raise SystemExit(f"unknown client {kind!r}")
    print(json.dumps(spans), flush=True)
    os._exit(0)  # a Celery worker thread may still be running: nothing of it is waited for
