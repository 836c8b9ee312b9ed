"""What the trace context of a replay (console.tracing.replay, DLO_REPLAY_TRACE) adds to each
letter's to_outgoing, with the console's telemetry off: a few microseconds is the budget at
5,000 letters a second. Run: .venv/bin/python benchmarks/replay_trace_cost.py

Each case makes the same Publications into messages, with the mode's headers, and prints the
microseconds a letter takes, against the same letters with the trace step left out. Then, with
the telemetry on (an SDK tracer whose exporter drops what it is given), what the replay batch's
span adds a letter in the job's thread (console.tracing.telemetry.replay_batch: one span per
batch of 1,000, a link per letter that carries a trace).
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from console.brokers import publication  # noqa: E402
from console.tracing import replay  # noqa: E402

LETTERS = 20_000
PLAIN = {"content-type": "application/json", "x-origin-queue": "orders", "x-exception": "KeyError: 'sku'",
         "x-death": [{"count": 1, "queue": "orders", "reason": "rejected"}], "x-retries": 3}
TRACED = {**PLAIN, "traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
          "tracestate": "rojo=00f067aa0ba902b7"}


def letters(headers: dict) -> list[publication.Publication]:
    text = json.dumps(headers)
    return [publication.Publication(i, "orders", "", b"{}", text, "{}", f"r{i}") for i in range(LETTERS)]


def best_of(runs: int, work) -> float:  # noqa: ANN001 - a callable of no arguments
    """The least CPU seconds of ``runs`` calls (process time: the machine is shared, and what
    other processes take of it is not this code's cost)."""
    best = float("inf")
    for _ in range(runs):
        started = time.process_time()
        work()
        best = min(best, time.process_time() - started)
    return best


def main() -> None:
    real = publication.replay_headers

    def left_out(headers, traceparent=""):  # noqa: ANN001, ANN202 - the step left out
        return headers

    for name, headers in (("no trace context", PLAIN), ("a W3C traceparent", TRACED)):
        batch = letters(headers)

        def make_all(batch: list[publication.Publication] = batch) -> None:
            for letter in batch:
                publication.to_outgoing(letter)

        for mode in replay.MODES:
            os.environ["DLO_REPLAY_TRACE"] = mode
            replay.replay_mode.cache_clear()
            without = with_it = float("inf")
            for _ in range(7):  # alternated, so that a busy moment of the machine hits both
                publication.replay_headers = left_out
                without = min(without, best_of(1, make_all))
                publication.replay_headers = real
                with_it = min(with_it, best_of(1, make_all))
            per = 1e6 / len(batch)
            print(f"{name:18} {mode:4}: {with_it * per:6.2f} us a letter, {(with_it - without) * per:+5.2f} us for the "
                  f"trace step (to_outgoing without it: {without * per:.2f} us)")


def with_telemetry() -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult

    from console.tracing import telemetry

    class Dropped(SpanExporter):
        def export(self, spans):  # type: ignore[no-untyped-def]
            return SpanExportResult.SUCCESS

    provider = TracerProvider()
    provider.add_span_processor(BatchSpanProcessor(Dropped()))
    telemetry._tracer = provider.get_tracer("benchmark")
    os.environ["DLO_REPLAY_TRACE"] = replay.LINK
    replay.replay_mode.cache_clear()
    for name, headers in (("no trace context", PLAIN), ("a W3C traceparent", TRACED)):
        batch = letters(headers)
        def spans(batch: list[publication.Publication] = batch) -> None:
            for start in range(0, len(batch), 1000):
                span, _ = telemetry.replay_batch(1, batch[start:start + 1000])
                telemetry.replay_batch_ended(span, 1000, 0)

        best = best_of(7, spans)
        print(f"{name:18} telemetry on: +{best / len(batch) * 1e6:5.2f} us a letter for the batch span and its links")
    provider.shutdown()


if __name__ == "__main__":
    main()
    with_telemetry()
