"""A letter's trace context is read right from every format (issue 34): test cases made by the
official OpenTelemetry propagators (W3C Trace Context, B3 single and multi header, Jaeger)
injecting random span contexts, read back as the propagator's own extract reads them; the
same from the values as custody stores them (bytes tagged ``$bytes``). Junk never raises and
never reads as a trace: wrong lengths, non-hex, all-zero ids, a forbidden version, what
``int(x, 16)`` would let through."""

from __future__ import annotations

import json
import random

import pytest
from opentelemetry import trace
from opentelemetry.propagators.b3 import B3MultiFormat, B3SingleFormat
from opentelemetry.propagators.jaeger import JaegerPropagator
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from console.letters.values import to_json
from console.tracing.context import TraceContext, read_trace_context

PROPAGATORS = {"w3c": TraceContextTextMapPropagator(), "b3": B3SingleFormat(), "b3multi": B3MultiFormat(),
               "jaeger": JaegerPropagator()}
CASES = 200


def random_context(rng: random.Random, *, short: bool = False) -> trace.SpanContext:
    bits = 64 if short else 128
    return trace.SpanContext(trace_id=rng.getrandbits(bits) or 1, span_id=rng.getrandbits(64) or 1,
                             is_remote=False, trace_flags=trace.TraceFlags(rng.choice((0, 1))))


def injected(name: str, context: trace.SpanContext) -> dict[str, str]:
    carrier: dict[str, str] = {}
    PROPAGATORS[name].inject(carrier, context=trace.set_span_in_context(trace.NonRecordingSpan(context)))
    return carrier


def extracted(name: str, carrier: dict[str, str]) -> trace.SpanContext:
    """What the propagator itself reads back: the reference the console must agree with."""
    return trace.get_current_span(PROPAGATORS[name].extract(carrier)).get_span_context()


@pytest.mark.parametrize("name", PROPAGATORS)
def test_random_contexts_injected_by_the_official_propagators_read_back(name):
    rng = random.Random(f"issue-34-{name}")
    for case in range(CASES):
        context = random_context(rng, short=name in ("b3", "b3multi", "jaeger") and case % 4 == 0)
        carrier = injected(name, context)
        expected = extracted(name, carrier)
        assert expected.is_valid
        want = (trace.format_trace_id(expected.trace_id), trace.format_span_id(expected.span_id))
        # As a capture reads it (raw values), in a header named as any producer may case it,
        # and as custody stores it (bytes tagged, JSON text parsed back).
        as_bytes = {key.title(): value.encode() for key, value in carrier.items()}
        for headers in (carrier, {key.upper(): value for key, value in carrier.items()},
                        json.loads(json.dumps(to_json(as_bytes)))):
            read = read_trace_context({"x-death": [{"count": 1}], **headers}, {"content_type": "text/plain"})
            assert isinstance(read, TraceContext), (name, headers)
            assert (read.trace_id, read.span_id) == want, (name, headers)
            assert read.format == name
            assert read.sampled in (bool(context.trace_flags.sampled), None)


@pytest.mark.parametrize("name, field", [("b3", "b3"), ("b3multi", "x-b3-traceid"), ("jaeger", "uber-trace-id")])
def test_64_bit_trace_ids_as_older_producers_write_them_read_as_the_propagators_read_them(name, field):
    rng = random.Random(f"64-bit-{name}")
    for _ in range(CASES):
        context = random_context(rng, short=True)
        carrier = injected(name, context)
        carrier[field] = carrier[field].replace("0" * 16, "", 1)  # the 64-bit id alone, 16 digits
        if name == "jaeger":  # Jaeger's clients also drop leading zeros
            carrier[field] = carrier[field].lstrip("0") or "0"
        expected = extracted(name, carrier)
        read = read_trace_context(carrier)
        assert (read.trace_id, read.span_id) == (trace.format_trace_id(expected.trace_id),
                                                 trace.format_span_id(expected.span_id)), carrier


def test_the_same_context_in_the_properties_or_a_dramatiq_body():
    context = random_context(random.Random("dramatiq"))
    carrier = injected("w3c", context)
    want = trace.format_trace_id(context.trace_id)
    assert read_trace_context({}, carrier).trace_id == want  # where some transports put headers
    body = json.dumps({"queue_name": "default", "actor_name": "charge", "args": [7], "kwargs": {},
                       "options": {"options": {"trace_context": carrier}}, "message_id": "m1"}).encode()
    read = read_trace_context({}, {}, body)
    assert read.trace_id == want and read.source == "body:traceparent"


def test_w3c_wins_over_the_others_and_tracestate_is_kept_when_well_formed():
    rng = random.Random("order")
    w3c, b3 = random_context(rng), random_context(rng)
    headers = {**injected("b3", b3), **injected("w3c", w3c), "tracestate": "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"}
    read = read_trace_context(headers)
    assert read.trace_id == trace.format_trace_id(w3c.trace_id) and read.tracestate.startswith("congo=")
    assert read_trace_context({**headers, "tracestate": "no equals sign"}).tracestate == ""


TRACE, SPAN = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
JUNK = [
    {"traceparent": f"00-{TRACE.upper()}-{SPAN}-01"},  # W3C is lowercase
    {"traceparent": f"00-{'0' * 32}-{SPAN}-01"},
    {"traceparent": f"00-{TRACE}-{'0' * 16}-01"},
    {"traceparent": f"ff-{TRACE}-{SPAN}-01"},  # version ff is forbidden
    {"traceparent": f"00-{TRACE}-{SPAN}-01-extra"},  # version 00 has four fields
    {"traceparent": f"00-{TRACE[:-1]}-{SPAN}-01"},
    {"traceparent": f"00-{TRACE}-{SPAN}"},
    {"traceparent": f"00_{TRACE}_{SPAN}_01"},
    {"traceparent": "00-" + "g" * 32 + f"-{SPAN}-01"},
    {"traceparent": f"00-{TRACE}-{SPAN}-01\x00"},
    {"traceparent": b"\xff\xfe" + TRACE.encode()},
    {"traceparent": f"00-{TRACE}-{SPAN}-01" + " " * 600},  # longer than any header read
    {"traceparent": {"$bytes": "not base64!"}},
    {"traceparent": {"nested": f"00-{TRACE}-{SPAN}-01"}},
    {"traceparent": 12345},
    {"b3": "1"}, {"b3": "d"},  # a sampling decision alone names no trace
    {"b3": f"{TRACE}-{SPAN}-x"}, {"b3": f"{TRACE}-{'0' * 16}"}, {"b3": f"{TRACE[:20]}-{SPAN}"},
    {"b3": f"{TRACE}-{SPAN}-1-nothex"},
    {"X-B3-TraceId": TRACE}, {"X-B3-TraceId": TRACE, "X-B3-SpanId": "0x" + SPAN[2:]},
    {"uber-trace-id": f"0x{TRACE[2:]}:{SPAN}:0:1"},  # int(x, 16) reads these; the console does not
    {"uber-trace-id": f"+{TRACE[1:]}:{SPAN}:0:1"}, {"uber-trace-id": f"{TRACE[:8]}_{TRACE[8:16]}:{SPAN}:0:1"},
    {"uber-trace-id": f"{TRACE}:{SPAN}:0"}, {"uber-trace-id": f"{TRACE}1:{SPAN}:0:1"},
    {"uber-trace-id": f"0:{SPAN}:0:1"}, {"uber-trace-id": f"{TRACE}:0:0:1"},
    {},
]


@pytest.mark.parametrize("headers", JUNK, ids=range(len(JUNK)))
def test_junk_is_no_trace_context(headers):
    assert read_trace_context(headers) is None
    assert read_trace_context({}, headers) is None


def test_random_bytes_never_raise():
    rng = random.Random("fuzz")
    names = ["traceparent", "tracestate", "b3", "X-B3-TraceId", "X-B3-SpanId", "uber-trace-id"]
    for _ in range(2000):
        headers = {rng.choice(names): rng.choice([
            bytes(rng.getrandbits(8) for _ in range(rng.randrange(80))),
            "".join(rng.choice("0123456789abcdefABCDEF-:%x ") for _ in range(rng.randrange(80))),
            rng.random(), None, [], {"$bytes": "AA=="},
        ]) for _ in range(3)}
        body = bytes(rng.getrandbits(8) for _ in range(rng.randrange(200))) + b'"trace_context"'
        read = read_trace_context(headers, headers, b"{" + body)
        assert read is None or (len(read.trace_id), len(read.span_id)) == (32, 16)
    assert read_trace_context(None, None, b"[" * 100_000) is None
    assert read_trace_context("junk", 7, b"{" + b'"trace_context"' + b"[" * 60_000) is None  # type: ignore[arg-type]
