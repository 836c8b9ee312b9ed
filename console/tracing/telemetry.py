"""The console's own traces: its web requests, Celery tasks, jobs, keeper rounds, rule rounds,
PostgreSQL statements and replay batches, exported over OTLP/HTTP.

On only where the standard OpenTelemetry variables ask for it: ``OTEL_EXPORTER_OTLP_ENDPOINT``
or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` set (with the exporter's other ``OTEL_EXPORTER_OTLP_*``
variables, ``OTEL_SERVICE_NAME``, ``OTEL_RESOURCE_ATTRIBUTES``, ``OTEL_BSP_*``, read by the SDK
itself), and neither ``OTEL_SDK_DISABLED=true`` nor ``OTEL_TRACES_EXPORTER=none``. Off, nothing
of the SDK is imported and every helper here is a no-op that costs an attribute read.

:func:`start` is called once per process where work runs: console/wsgi.py (a Gunicorn worker
loads it after its fork), console/celery.py (in each pool process after its fork, or in the
worker with any other pool) and ``manage.py keep``: an exporter's thread does not survive a fork.

Spans carry ids, kinds, counts and names from the code (URL routes, SQL with placeholders),
never message content: no body, no header value, no exception text. What the instrumentations
could still let through, a request's query string (filters people type, maskable values among
them) and exception messages, is taken out of every span before it leaves (:class:`_Scrubbed`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Iterator, Sequence
from typing import Any, cast

from console.tracing.replay import (
    FAILED_CONTEXT_HEADER,
    LINK,
    context_headers,
    failed_context,
    parse_traceparent,
    replay_mode,
)

log = logging.getLogger(__name__)

#: The console's tracer once :func:`start` turned telemetry on; None while it is off.
_tracer: Any = None

#: Links a replay batch's span may hold (one per letter); OTEL_SPAN_LINK_COUNT_LIMIT overrides it.
BATCH_LINKS = 1000

#: Attributes whose value may hold a query string, kept without it.
_URL_KEYS = frozenset({"http.url", "http.target", "url.full"})
#: Attributes dropped from every span: query strings and what messages say.
_DROPPED_KEYS = frozenset({"url.query", "exception.message", "exception.stacktrace",
                           "messaging.message.conversation_id", "messaging.message.body.size"})


def configured() -> bool:
    """Whether the standard OTEL_* variables ask for traces over OTLP."""
    # The SDK's own variables, read as the SDK reads them (not console settings: no *_FILE).
    env = os.environ
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return False
    if env.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() == "none":
        return False
    return bool(env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "").strip()
                or env.get("OTEL_EXPORTER_OTLP_ENDPOINT", "").strip())


def enabled() -> bool:
    return _tracer is not None


def start(role: str) -> bool:
    """Turn the console's telemetry on in this process if configured (once; later calls do
    nothing). ``role`` (web, worker, keeper) names the process in its spans' resource."""
    global _tracer
    replay_mode()  # a DLO_REPLAY_TRACE that is none of its values stops the start, loudly
    if _tracer is not None or not configured():
        return _tracer is not None
    # Imported here, not at the top: with telemetry off, no process pays for the SDK.
    from opentelemetry import trace
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.instrumentation.aio_pika import AioPikaInstrumentor
    from opentelemetry.instrumentation.celery import CeleryInstrumentor
    from opentelemetry.instrumentation.django import DjangoInstrumentor
    from opentelemetry.instrumentation.psycopg import PsycopgInstrumentor
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import SpanLimits, TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    resource = Resource.create({"dlo.process": role})  # with OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES
    if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
        resource = resource.merge(Resource({"service.name": "dead-letter-office"}))
    limits = SpanLimits() if os.environ.get("OTEL_SPAN_LINK_COUNT_LIMIT") else SpanLimits(max_links=BATCH_LINKS)
    provider = TracerProvider(resource=resource, span_limits=limits)
    # _Scrubbed has the SpanExporter's methods without its base class, which would import the SDK.
    provider.add_span_processor(BatchSpanProcessor(cast(Any, _Scrubbed(OTLPSpanExporter()))))
    trace.set_tracer_provider(provider)
    DjangoInstrumentor().instrument()
    CeleryInstrumentor().instrument()
    PsycopgInstrumentor().instrument()
    AioPikaInstrumentor().instrument()
    _tracer = trace.get_tracer("console")
    log.info("telemetry on: traces of the %s exported over OTLP/HTTP", role)
    return True


class _NoSpan:
    """What the helpers give while telemetry is off: every call does nothing."""

    def set_attribute(self, key: str, value: Any) -> None:
        pass

    def set_attributes(self, attributes: dict[str, Any]) -> None:
        pass

    def update_name(self, name: str) -> None:
        pass


NO_SPAN = _NoSpan()


@contextlib.contextmanager
def span(name: str, attributes: dict[str, Any] | None = None, *, quiet: bool = False) -> Iterator[Any]:
    """A span of the console's own (a keeper round, a round of the rules), current inside the
    block; a no-op while telemetry is off. Attributes are ids and counts, never content, and an
    error's message stays out of it (only its type is named). ``quiet``: no span, and none of
    the instrumentations' inside the block either (a keeper's idle rounds, twice a second)."""
    if _tracer is None:
        yield NO_SPAN
        return
    if quiet:
        from opentelemetry.instrumentation.utils import suppress_instrumentation

        with suppress_instrumentation():
            yield NO_SPAN
        return
    from opentelemetry.trace import Status, StatusCode

    with _tracer.start_as_current_span(name, attributes=attributes, record_exception=False,
                                       set_status_on_exception=False) as current:
        try:
            yield current
        except BaseException as exc:
            current.set_status(Status(StatusCode.ERROR, type(exc).__name__))
            current.set_attribute("error.type", type(exc).__name__)
            raise


def job_ended(span: Any, job: Any, status: str) -> None:
    """What a job's span says about it at its end: id, kind, status and counts (an error for a
    job that failed, named by its status only: its error text may quote what a broker said)."""
    span.set_attributes({"dlo.job.id": job.pk, "dlo.job.kind": job.kind, "dlo.job.status": str(status),
                         "dlo.job.total": job.total or 0, "dlo.job.done": job.done, "dlo.job.failed": job.failed,
                         "dlo.job.skipped": job.skipped})
    if _tracer is not None and str(status) == "failed":
        from opentelemetry.trace import Status, StatusCode

        span.set_status(Status(StatusCode.ERROR, "job failed"))


# -- replay batches --------------------------------------------------------------------------


def replay_batch(job_id: int, publications: Sequence[Any], redactor: Any = None) -> tuple[Any, Sequence[Any]]:
    """A span for one batch a job publishes (a child of the job's span) and the batch with
    that span's context as each letter's ``traceparent`` (DLO_REPLAY_TRACE=link): one span per
    batch, not per letter, whose links point at each letter's failed trace, unless ``redactor``
    (the site's rules, console.access.redaction_policy.for_everyone) masks that trace's headers.
    Off, the batch is handed back as it is (the publication makes random ids)."""
    if _tracer is None:
        return None, publications
    from opentelemetry.trace import Link, SpanContext, SpanKind, TraceFlags

    links = []
    for publication in publications:
        failed = _failed_context(publication.headers_json, redactor)
        if failed is not None:
            trace_id, span_id, sampled = failed
            links.append(Link(SpanContext(trace_id, span_id, is_remote=True,
                                          trace_flags=TraceFlags(1 if sampled else 0)),
                              {"dlo.letter.id": publication.key}))
    batch = _tracer.start_span("replay publish", kind=SpanKind.PRODUCER, links=links,
                               attributes={"dlo.job.id": job_id, "messaging.system": "dlo",
                                           "messaging.batch.message_count": len(publications),
                                           "dlo.replay.trace": replay_mode(),
                                           "dlo.replay.linked": len(links)})
    if replay_mode() != LINK:
        return batch, publications
    context = batch.get_span_context()
    traceparent = f"00-{context.trace_id:032x}-{context.span_id:016x}-{int(context.trace_flags):02x}"
    return batch, [publication._replace(traceparent=traceparent) for publication in publications]


def replay_batch_ended(batch: Any, confirmed: int, refused: int) -> None:
    if batch is None:
        return
    from opentelemetry.trace import Status, StatusCode

    batch.set_attributes({"dlo.replay.confirmed": confirmed, "dlo.replay.refused": refused})
    if refused:
        batch.set_status(Status(StatusCode.ERROR, "not confirmed by the broker"))
    batch.end()


def _failed_context(headers_json: str, redactor: Any) -> tuple[int, int, bool] | None:
    """(trace id, span id, sampled) of the trace a letter failed in: the context it died with,
    else the one a replay before kept for it; None when the site's redaction rules change any
    of the headers it is read from (a trace a rule masks is not named outside the console)."""
    lowered = headers_json.lower()
    if "traceparent" not in lowered and "b3" not in lowered and "uber-trace-id" not in lowered:
        return None  # most letters: no name of a context header anywhere in the text
    headers = json.loads(headers_json)
    carried = context_headers(headers)
    failed = failed_context(headers, carried) if carried else None
    if failed is None and isinstance(headers.get(FAILED_CONTEXT_HEADER), str):
        carried = [FAILED_CONTEXT_HEADER]
        failed = (headers[FAILED_CONTEXT_HEADER], "w3c")
    if failed is None:
        return None
    if redactor is not None:
        read_from = {name: headers[name] for name in carried}
        if redactor.value(read_from) != read_from:
            return None
    return parse_traceparent(failed[0])


# -- what leaves ---------------------------------------------------------------------------


def _scrubbed_attributes(attributes: Any) -> dict[str, Any]:
    kept = {}
    for key, value in (attributes or {}).items():
        if key in _DROPPED_KEYS or key.startswith(("http.request.header.", "http.response.header.")):
            continue
        if key in _URL_KEYS and isinstance(value, str):
            value = value.split("?", 1)[0]
        kept[key] = value
    return kept


class _Scrubbed:
    """The OTLP exporter, handed copies of the spans without query strings, exception
    messages and status descriptions (see the module's docstring)."""

    def __init__(self, exporter: Any) -> None:
        self.exporter = exporter

    def export(self, spans: Sequence[Any]) -> Any:
        from opentelemetry.sdk.trace import Event, ReadableSpan
        from opentelemetry.trace import Status

        clean = [ReadableSpan(
            name=span.name, context=span.context, parent=span.parent, resource=span.resource,
            attributes=_scrubbed_attributes(span.attributes),
            events=[Event(event.name, _scrubbed_attributes(event.attributes), event.timestamp)
                    for event in span.events],
            links=[type(link)(link.context, _scrubbed_attributes(link.attributes)) for link in span.links],
            kind=span.kind, status=Status(span.status.status_code), start_time=span.start_time,
            end_time=span.end_time, instrumentation_scope=span.instrumentation_scope,
        ) for span in spans]
        return self.exporter.export(clean)

    def shutdown(self) -> None:
        self.exporter.shutdown()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return bool(self.exporter.force_flush(timeout_millis))
