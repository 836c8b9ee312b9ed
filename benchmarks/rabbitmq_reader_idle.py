"""What the RabbitMQ reader costs while its places are idle, and while letters trickle in: one
reader follows ``--places`` queues (one connection, a consumer each on a few channels) and takes
and acknowledges for ``--seconds``, half a second a take as the keeper's reading thread does
(without storing anything). The process's CPU over that stretch is printed (no assertion:
figures go to benchmarks/README.md).

    .venv/bin/python benchmarks/rabbitmq_reader_idle.py               # --places 700 --seconds 30
    .venv/bin/python benchmarks/rabbitmq_reader_idle.py --rate 20     # 20 letters a second, spread

With ``--rate``, a child process (its CPU not counted) publishes that many 1 KiB messages a
second, each to a random queue, stamped with the time it was sent; the sent-to-taken delay's
median, p95 and max are printed too. Needs the RabbitMQ of the tests (amqp://guest:guest@
127.0.0.1:5672/). The queues are fresh names, declared before and deleted after.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import random
import statistics
import sys
import time
import uuid
from pathlib import Path

import aio_pika

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from console.brokers.base import BrokerConfig, PlaceRef  # noqa: E402
from console.brokers.rabbitmq.adapter import RabbitMQAdapter  # noqa: E402

URL = "amqp://127.0.0.1:5672/%2F"
SENT_AT = "dlobench-sent-at"


async def _on_one_channel(names: list[str], delete: bool) -> None:
    connection = await aio_pika.connect(host="127.0.0.1", login="guest", password="guest")
    async with connection, connection.channel() as channel:
        for name in names:
            if delete:
                await channel.queue_delete(name)
            else:
                await channel.declare_queue(name)


async def _send(names: list[str], rate: float, seconds: float) -> None:
    connection = await aio_pika.connect(host="127.0.0.1", login="guest", password="guest")
    async with connection, connection.channel() as channel:
        started = time.monotonic()
        for n in range(int(rate * seconds)):
            await asyncio.sleep(max(0.0, started + n / rate - time.monotonic()))
            message = aio_pika.Message(b"x" * 1024, headers={SENT_AT: repr(time.time())})
            await channel.default_exchange.publish(message, random.choice(names))


def send(names: list[str], rate: float, seconds: float) -> None:
    """The child: ``rate`` messages a second to random queues for ``seconds``."""
    asyncio.run(_send(names, rate, seconds))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--places", type=int, default=700)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--per-place", type=int, default=100)
    parser.add_argument("--rate", type=float, default=0.0, help="letters a second, spread over the places")
    args = parser.parse_args()

    suffix = uuid.uuid4().hex[:10]
    names = [f"bench{i:04d}-{suffix}.dlq" for i in range(args.places)]
    asyncio.run(_on_one_channel(names, delete=False))
    delays: list[float] = []
    try:
        config = BrokerConfig(kind="rabbitmq", url=URL, username="guest", password="guest")
        with RabbitMQAdapter(config) as adapter:
            started = time.monotonic()
            with adapter.open_reader(per_place=args.per_place) as reader:
                refused = reader.follow([PlaceRef(name) for name in names])
                followed = time.monotonic() - started
                sender = None
                if args.rate:
                    sender = multiprocessing.Process(target=send, args=(names, args.rate, args.seconds))
                    sender.start()
                cpu_before, wall_before = time.process_time(), time.monotonic()
                while (left := wall_before + args.seconds - time.monotonic()) > 0 or (
                        sender is not None and len(delays) < int(args.rate * args.seconds) and left > -10):
                    for place, messages in reader.take(1000, wait_seconds=0.5).items():
                        now = time.time()
                        delays.extend(now - float(m.headers.get(SENT_AT, now)) for m in messages)
                        reader.ack(place, messages)
                cpu, wall = time.process_time() - cpu_before, time.monotonic() - wall_before
                if sender is not None:
                    sender.join()
    finally:
        asyncio.run(_on_one_channel(names, delete=True))
    print(f"followed {args.places} places in {followed * 1000:.0f} ms (one connection; refused: {len(refused)})")
    print(f"{wall:.1f} s at {args.rate:g} letters/s: reader CPU {cpu * 1000:.1f} ms = "
          f"{100 * cpu / wall:.3f}% of a core; letters taken: {len(delays)}")
    if len(delays) >= 2:
        cuts = statistics.quantiles(delays, n=20)
        print(f"sent to taken: median {statistics.median(delays) * 1000:.1f} ms, p95 {cuts[18] * 1000:.1f} ms, "
              f"max {max(delays) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
