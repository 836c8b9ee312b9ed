"""What the ActiveMQ reader costs while its places are idle, and while letters trickle in: one
reader follows ``--places`` dead places (one STOMP connection, a subscription each) and takes
and acknowledges for ``--seconds``, half a second a take as the keeper's reading thread does
(without storing anything). The process's CPU over that stretch is printed (no assertion:
figures go to benchmarks/README.md).

    .venv/bin/python benchmarks/activemq_reader_idle.py               # --places 100 --seconds 30
    .venv/bin/python benchmarks/activemq_reader_idle.py --rate 20     # 20 letters a second, spread

With ``--rate``, a child process (its CPU not counted) sends that many persistent letters a
second, each to a random place, stamped with the time it was sent; the sent-to-taken delay's
median, p95 and max are printed too (the acknowledgement's round trip is in the CPU, not the
delay). Needs the ActiveMQ of the tests (``DLO_TEST_ACTIVEMQ_URL``, stomp://127.0.0.1:61613).
The places are fresh names, so ActiveMQ creates them empty when they are subscribed to; empty
queues stay behind (STOMP cannot delete a queue).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import statistics
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from console.brokers.activemq.adapter import ActiveMQAdapter  # noqa: E402
from console.brokers.activemq.connection import StompLink  # noqa: E402
from console.brokers.base import BrokerConfig, PlaceRef  # noqa: E402

URL = os.environ.get("DLO_TEST_ACTIVEMQ_URL", "stomp://127.0.0.1:61613")
SENT_AT = "dlobench-sent-at"


def send(names: list[str], rate: float, seconds: float) -> None:
    """The child: ``rate`` letters a second to random places for ``seconds``."""
    link = StompLink(BrokerConfig(kind="activemq", url=URL))
    started = time.monotonic()
    for n in range(int(rate * seconds)):
        time.sleep(max(0.0, started + n / rate - time.monotonic()))
        link.confirmed("SEND", {"destination": f"/queue/{random.choice(names)}", "persistent": "true",
                                SENT_AT: repr(time.time())}, "a send", b"x" * 1024)
    link.close()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--places", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--per-place", type=int, default=10)
    parser.add_argument("--rate", type=float, default=0.0, help="letters a second, spread over the places")
    args = parser.parse_args()

    suffix = uuid.uuid4().hex[:10]
    places = [PlaceRef(f"DLQ.bench{i}.{suffix}") for i in range(args.places)]
    delays: list[float] = []
    with ActiveMQAdapter(BrokerConfig(kind="activemq", url=URL)) as adapter:
        started = time.monotonic()
        with adapter.open_reader(per_place=args.per_place) as reader:
            reader.follow(places)
            followed = time.monotonic() - started
            sender = None
            if args.rate:
                sender = multiprocessing.Process(target=send, args=([p.name for p in places], args.rate, args.seconds))
                sender.start()
            cpu_before, wall_before = time.process_time(), time.monotonic()
            while (left := wall_before + args.seconds - time.monotonic()) > 0 or (
                    sender is not None and len(delays) < int(args.rate * args.seconds) and left > -10):
                for place, messages in reader.take(100, wait_seconds=0.5).items():
                    now = time.time()
                    delays.extend(now - float(m.headers.get(SENT_AT, now)) for m in messages)
                    reader.ack(place, messages)
            cpu, wall = time.process_time() - cpu_before, time.monotonic() - wall_before
            if sender is not None:
                sender.join()
    print(f"followed {args.places} places in {followed * 1000:.0f} ms (one connection)")
    print(f"{wall:.1f} s at {args.rate:g} letters/s: reader CPU {cpu * 1000:.1f} ms = "
          f"{100 * cpu / wall:.3f}% of a core; letters taken: {len(delays)}")
    if len(delays) >= 2:
        cuts = statistics.quantiles(delays, n=20)
        print(f"sent to taken: median {statistics.median(delays) * 1000:.1f} ms, p95 {cuts[18] * 1000:.1f} ms, "
              f"max {max(delays) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
