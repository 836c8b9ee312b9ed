"""The trace context headers a replay publishes (console.tracing.replay, DLO_REPLAY_TRACE), for
letters whose context the official OpenTelemetry propagators wrote (W3C, B3 single and multi,
Jaeger), read back by the same propagators as a consumer using them would: in ``link`` mode
each reads a fresh context, the same one in every format, and the failed one is in
``x-dlo-failed-traceparent``; ``keep`` changes nothing; ``none`` leaves no context to read."""

from __future__ import annotations

import random

import pytest
from opentelemetry import trace
from opentelemetry.propagators.b3 import B3MultiFormat, B3SingleFormat
from opentelemetry.propagators.jaeger import JaegerPropagator
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

from console.env import ConfigError
from console.tracing.replay import FAILED_CONTEXT_HEADER, replay_headers, replay_mode

W3C = TraceContextTextMapPropagator()
PROPAGATORS = {"w3c": W3C, "b3": B3SingleFormat(), "b3multi": B3MultiFormat(), "jaeger": JaegerPropagator()}


@pytest.fixture
def mode(monkeypatch):
    def set_mode(value: str) -> None:
        monkeypatch.setenv("DLO_REPLAY_TRACE", value)
        replay_mode.cache_clear()

    yield set_mode
    replay_mode.cache_clear()


def written_by(form: str, rng: random.Random) -> tuple[SpanContext, dict[str, str]]:
    """A context of random ids and the headers the official propagator writes for it."""
    context = SpanContext(rng.getrandbits(128) or 1, rng.getrandbits(64) or 1, is_remote=False,
                          trace_flags=TraceFlags(TraceFlags.SAMPLED))
    carrier: dict[str, str] = {}
    PROPAGATORS[form].inject(carrier, trace.set_span_in_context(NonRecordingSpan(context)))
    return context, carrier


def read_by(form: str, headers: dict) -> SpanContext:
    return trace.get_current_span(PROPAGATORS[form].extract(headers)).get_span_context()


@pytest.mark.parametrize("form", sorted(PROPAGATORS))
def test_link_gives_a_fresh_context_in_every_format_the_letter_used_and_keeps_the_failed_one(form, mode):
    mode("link")
    rng = random.Random(form)
    for _ in range(50):
        failed, carried = written_by(form, rng)
        headers = replay_headers({**carried, "x-order": "7"})
        fresh = read_by("w3c", headers)
        assert fresh.is_valid and fresh.trace_id != failed.trace_id and fresh.trace_flags.sampled
        again = read_by(form, headers)
        assert (again.trace_id, again.span_id) == (fresh.trace_id, fresh.span_id)
        kept = read_by("w3c", {"traceparent": headers[FAILED_CONTEXT_HEADER]})
        assert (kept.trace_id, kept.span_id) == (failed.trace_id, failed.span_id)
        assert headers["x-order"] == "7"


def test_link_uses_the_consoles_span_when_given_and_random_ids_otherwise(mode):
    mode("link")
    span = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    failed = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
    assert replay_headers({}, span) == {"traceparent": span}
    assert len({replay_headers({"traceparent": failed})["traceparent"] for _ in range(1000)}) == 1000


def test_a_letter_that_carried_no_context_goes_as_it_came_without_the_consoles_span(mode):
    mode("link")
    assert replay_headers({"x-order": "7"}) == {"x-order": "7"}


def test_a_letter_replayed_again_keeps_the_trace_it_failed_in_last(mode):
    mode("link")
    first = replay_headers({"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"})
    # The consumer's retry continued the replay's context, failed, and died with it.
    second = replay_headers(dict(first))
    assert second[FAILED_CONTEXT_HEADER] == first["traceparent"] != second["traceparent"]


@pytest.mark.parametrize("form", sorted(PROPAGATORS))
def test_keep_changes_nothing_and_none_leaves_no_context(form, mode):
    failed, carried = written_by(form, random.Random(form))
    mode("keep")
    assert replay_headers({**carried, FAILED_CONTEXT_HEADER: "x"}) == {**carried, FAILED_CONTEXT_HEADER: "x"}
    mode("none")
    headers = replay_headers({**carried, "tracestate": "a=b", FAILED_CONTEXT_HEADER: "x", "x-order": "7"})
    assert headers == {"x-order": "7"}
    assert not any(read_by(name, headers).is_valid for name in PROPAGATORS)


def test_a_mode_that_is_none_of_the_three_is_refused(mode):
    mode("sometimes")
    with pytest.raises(ConfigError, match="DLO_REPLAY_TRACE"):
        replay_mode()


def test_b3_headers_keep_the_spelling_the_letter_used(mode):
    mode("link")
    brave = {"X-B3-TraceId": "463ac35c9f6413ad48485a3953bb6124", "X-B3-SpanId": "a2fb4a1d1a96d312",
             "X-B3-ParentSpanId": "0020000000000001", "X-B3-Sampled": "1"}
    headers = replay_headers(dict(brave))
    assert sorted(headers) == sorted(["X-B3-TraceId", "X-B3-SpanId", "X-B3-Sampled", "traceparent",
                                      FAILED_CONTEXT_HEADER])
    assert headers["traceparent"] == f"00-{headers['X-B3-TraceId']}-{headers['X-B3-SpanId']}-01"
    assert headers[FAILED_CONTEXT_HEADER] == "00-463ac35c9f6413ad48485a3953bb6124-a2fb4a1d1a96d312-01"
