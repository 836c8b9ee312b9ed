"""A real OTLP/HTTP endpoint on loopback for the telemetry tests: it accepts ``POST /v1/traces``
as a collector does, decodes each body with the official protobuf messages
(opentelemetry-proto's ExportTraceServiceRequest) and keeps both, so a test can look at the
spans and search every byte that left the console (fixtures ``receiver`` and ``traced_worker``
in tests/conftest.py)."""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


@dataclass
class Span:
    """One received span, its ids as lowercase hex."""

    name: str
    trace_id: str
    span_id: str
    parent_span_id: str
    attributes: dict[str, Any]
    links: list[tuple[str, str, dict[str, Any]]]  # (trace id, span id, attributes)
    resource: dict[str, Any]
    status_message: str = ""
    events: list[dict[str, Any]] = field(default_factory=list)


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(item) for item in value.array_value.values]
    if kind == "kvlist_value":
        return {item.key: _value(item.value) for item in value.kvlist_value.values}
    return getattr(value, kind) if kind else None


def _attributes(pairs: Any) -> dict[str, Any]:
    return {pair.key: _value(pair.value) for pair in pairs}


class OtlpReceiver:
    def __init__(self) -> None:
        self.bodies: list[bytes] = []  # every request body as it arrived (decompressed)
        self.spans: list[Span] = []
        self.paths: list[str] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the name http.server calls
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                receiver._took(self.path, body)
                answer = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True, name="otlp-receiver")
        self._thread.start()

    def _took(self, path: str, body: bytes) -> None:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        spans = []
        for resource_spans in request.resource_spans:
            resource = _attributes(resource_spans.resource.attributes)
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    spans.append(Span(
                        name=span.name, trace_id=span.trace_id.hex(), span_id=span.span_id.hex(),
                        parent_span_id=span.parent_span_id.hex(), attributes=_attributes(span.attributes),
                        links=[(link.trace_id.hex(), link.span_id.hex(), _attributes(link.attributes))
                               for link in span.links],
                        resource=resource, status_message=span.status.message,
                        events=[{"name": event.name, **_attributes(event.attributes)} for event in span.events]))
        with self._lock:
            self.paths.append(path)
            self.bodies.append(body)
            self.spans.extend(spans)

    def wait_for(self, found: Callable[[list[Span]], Any], what: str, seconds: float = 30) -> Any:
        """Poll the spans received until ``found(spans)`` is truthy; that value."""
        deadline = time.monotonic() + seconds
        while True:
            with self._lock:
                spans = list(self.spans)
            value = found(spans)
            if value:
                return value
            if time.monotonic() > deadline:
                names = sorted({span.name for span in spans})
                raise AssertionError(f"waited {seconds}s for {what}; {len(spans)} spans received: {names}")
            time.sleep(0.1)

    def everything(self) -> bytes:
        with self._lock:
            return b"".join(self.bodies)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

