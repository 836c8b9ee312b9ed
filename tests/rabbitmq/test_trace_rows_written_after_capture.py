"""A capture reads each letter's trace context into its envelope (issue 34) and leaves the trace
filter's index row (LetterTrace) for after the capture, as it does the search rows: the COPY
pays for no index of its own. Letters are found by trace id at once, before the rows are
filled, and exactly the same after; a failure group says how many traces its letters span."""

from __future__ import annotations

import pytest

from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import DeadLetter
from console.models.letter import LetterTrace
from console.services.brokers import do_discover
from console.services.group_traces import group_traces
from console.services.search_rows import fill_search_rows
from console.services.selection import filter_letters

pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db]

TRACES = ["4bf92f3577b34da6a3ce929d0e0e4736", "0af7651916cd43dd8448eb211c80319c", "0000000000000000463ac35c9f6413ad"]
SPAN = "00f067aa0ba902b7"


def found(place, trace_id: str) -> list[str]:
    return sorted(filter_letters({"place": place.pk, "trace_id": trace_id}).values_list("message_id", flat=True))


def test_letters_are_found_by_trace_before_and_after_their_rows_are_written(kit, rabbit_broker, operator, settings):
    settings.DLO_BATCH_SIZE = 3
    dlq = kit.queue(kit.name("traced") + ".dlq")
    headers = [
        {"traceparent": f"00-{TRACES[0]}-{SPAN}-01"},
        {"b3": f"{TRACES[1]}-{SPAN}-1"},
        {"X-B3-TraceId": TRACES[2][16:], "X-B3-SpanId": SPAN, "X-B3-Sampled": "1"},  # a 64-bit B3 id
        {"uber-trace-id": f"{TRACES[0]}:{SPAN}:0:1"},
        {"traceparent": "00-not-a-trace-01"},
        {},
    ]
    for i, carried in enumerate(headers):
        kit.publish(dlq, b'{"order": %d}' % i, message_id=f"m{i}", headers=carried)
    (place,) = [p for p in do_discover(rabbit_broker, actor=operator) if p.name == dlq]

    assert run_job(request_job("capture", place=place, actor=operator, reason="capture").pk) == "succeeded"
    letters = {letter.message_id: letter for letter in DeadLetter.objects.filter(place=place)}
    assert [(letters[f"m{i}"].trace_id, letters[f"m{i}"].span_id) for i in range(6)] == [
        (TRACES[0], SPAN), (TRACES[1], SPAN), (TRACES[2], SPAN), (TRACES[0], SPAN), ("", ""), ("", "")]
    assert not LetterTrace.objects.filter(letter__place=place).exists()  # nothing written by the capture

    for when in ("before the fill", "after the fill"):
        assert found(place, TRACES[0]) == ["m0", "m3"], when
        assert found(place, TRACES[1].upper()) == ["m1"], when
        assert found(place, TRACES[2][16:]) == ["m2"], when  # a 64-bit id as B3 or Jaeger write it
        assert found(place, "ffffffffffffffffffffffffffffffff") == [], when
        assert group_traces(letters["m0"].fingerprint, operator).count == 3, when
        if when == "before the fill":
            assert fill_search_rows() == 6

    assert sorted(LetterTrace.objects.filter(letter__place=place).values_list("trace_id", flat=True)) == sorted(
        [TRACES[0], TRACES[1], TRACES[2], TRACES[0]])
