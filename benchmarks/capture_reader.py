"""A capture's reading of RabbitMQ, as its reader process reads (the adapter's capture session,
``next_batch`` and nothing else), with the delivery path of e814fb0 and with today's, in turn,
on the same dead letters in the same process.

    .venv/bin/python benchmarks/capture_reader.py              # --letters 20000 --rounds 7

``--letters`` persistent 1 KiB messages are published to an origin queue whose dead-letter
exchange routes to its DLQ, each expiring at once (a real ``x-death``), as
benchmarks/api_vs_shovel.py makes them. Each round then reads them all without acknowledging
them, in three batches (the consumer's prefetch is three batches, so all of them are let out
unacknowledged); closing the session hands them back to the queue for the next round
(redelivered). The two paths, in turn:

- before: aiormq's channel queue and content reader, a delivery's frames decoded by pamqp
  (what ``QueueConsumer._on_deliver_frame`` and ``LeanFrameReceiver`` did at e814fb0);
- after: ``capture.Deliveries`` and ``decoding.unmarshal``.

It prints the median CPU µs a letter of each (the process's CPU time: the adapter's event loop
thread does the reading), the median of the rounds' ratios, and checks that both read the same
messages (tags aside).
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pamqp.frame  # noqa: E402

from benchmarks import broker_bench as bench  # noqa: E402
from benchmarks.harness import print_paired  # noqa: E402
from console.brokers import get_adapter  # noqa: E402
from console.brokers.base import BrokerConfig, PlaceRef  # noqa: E402
from console.brokers.rabbitmq import capture, frames  # noqa: E402
from console.brokers.rabbitmq.decoding import unmarshal  # noqa: E402

CONFIG = BrokerConfig(kind="rabbitmq", url=bench.AMQP_URL, management_url=bench.MANAGEMENT_URL)


def before(raw, take) -> None:
    """e814fb0's path: the channel's deliveries through aiormq's queue, read by a replaced
    handler with aiormq's content reader."""
    async def on_deliver_frame(frame) -> None:
        header = await raw._Channel__get_content_header()
        take(await raw._read_content(frame, header))

    raw._on_deliver_frame = on_deliver_frame


PATHS = {"before": (before, pamqp.frame.unmarshal), "after": (capture.Deliveries, unmarshal)}


def read_all(adapter, place: PlaceRef, letters: int, path: str) -> tuple[float, list]:
    capture.Deliveries, frames.unmarshal = PATHS[path]
    seen = []
    with adapter.open_capture(place, prefetch=letters) as session:
        started = time.process_time()
        while len(seen) < letters:
            batch = session.next_batch(-(-letters // 3), 2.0)
            if not batch:
                raise SystemExit(f"the DLQ held {len(seen)} letters, not {letters}")
            seen.extend((m.message_id, m.body, m.headers.get("tenant"), m.envelope.origin_queue) for m in batch)
        spent = time.process_time() - started
    return spent / letters * 1e6, sorted(seen)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--letters", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    rabbit = bench.Rabbit()
    prefix = f"bench.reader.{uuid.uuid4().hex[:8]}"
    origin, dlq = f"{prefix}.orders", f"{prefix}.orders.dlq"
    rabbit.declare(dlq)
    rabbit.declare(origin, {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})
    original = capture.Deliveries, frames.unmarshal
    try:
        rabbit.publish(origin, args.letters, prefix=prefix, expiration=0)
        rabbit.wait_depth(dlq, args.letters)
        times: dict[str, list[float]] = {"before": [], "after": []}
        with get_adapter(CONFIG) as adapter:
            read_all(adapter, PlaceRef(dlq), args.letters, "after")  # warm: imports, caches, connection
            for _ in range(args.rounds):
                theirs, seen_before = read_all(adapter, PlaceRef(dlq), args.letters, "before")
                ours, seen_after = read_all(adapter, PlaceRef(dlq), args.letters, "after")
                assert seen_before == seen_after, "both paths read the same letters"
                times["before"].append(theirs)
                times["after"].append(ours)
    finally:
        capture.Deliveries, frames.unmarshal = original
        rabbit.cleanup()
    print_paired(times, "a letter read")


if __name__ == "__main__":
    main()
