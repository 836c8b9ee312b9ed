"""How long a job waits for its broker child (a capture's reader, a replay's publisher) to be
ready: started cold against taken from the spare the last child left
(console.brokers.child_process), in turn in the same run, against the local RabbitMQ.

    .venv/bin/python benchmarks/child_start.py            # --runs 5

Each run closes every spare, opens a child cold and closes it, waits for the spare it leaves
to import its client, then opens the next child from that spare. It prints each kind's times
(from the constructor's call until the child answered that its broker work is open), the
medians and their ratio.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

AMQP_URL = "amqp://guest:guest@127.0.0.1:5672/%2F"
QUEUE = "bench.child-start.dlq"


def _declare() -> None:
    import aio_pika

    async def declare() -> None:
        connection = await aio_pika.connect(AMQP_URL)
        async with connection:
            await (await connection.channel()).declare_queue(QUEUE)

    asyncio.run(declare())


def _drop_spares() -> None:
    from console.brokers import child_process

    with child_process._spares_lock:
        spares = list(child_process._spares.values())
        child_process._spares.clear()
    for spare in spares:
        spare.stdin.close()
        spare.wait(10)
        spare.stdout.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()

    from console.brokers import PlaceRef
    from console.brokers.base import BrokerConfig
    from console.brokers.capture_process import ChildCapture
    from console.brokers.publish_process import ChildPublisher

    _declare()
    config = BrokerConfig(kind="rabbitmq", url=AMQP_URL, management_url="http://127.0.0.1:15672",
                          username="guest", password="guest")
    kinds = {
        "capture's reader": lambda: ChildCapture(config, PlaceRef(QUEUE), prefetch=10),
        "replay's publisher": lambda: ChildPublisher(config, subject="bench"),
    }
    for label, make in kinds.items():
        cold, spare = [], []
        for _ in range(args.runs):
            _drop_spares()
            for times in (cold, spare):
                started = time.perf_counter()
                child = make()
                times.append(time.perf_counter() - started)
                child.close()
                time.sleep(2.0)  # the spare it left imports its client meanwhile
        print(f"{label:20} cold {' '.join(f'{t * 1000:.0f}' for t in cold)} ms; "
              f"from a spare {' '.join(f'{t * 1000:.0f}' for t in spare)} ms; "
              f"medians {statistics.median(cold) * 1000:.0f} / {statistics.median(spare) * 1000:.0f} ms, "
              f"ratio {statistics.median(spare) / statistics.median(cold):.3f}")
    _drop_spares()


if __name__ == "__main__":
    main()
