"""What the NATS reader costs while its places are idle: one reader follows ``--places`` dead
places (durable consumers with ``max_deliver``, all on one stream, each filtered to a subject of
its own) over the adapter's one connection and takes for ``--seconds``, half a second a take as
the keeper's reading thread does. Printed (no assertion): the process's CPU over that stretch
(every thread: the caller's and the adapter's event loop) and the pull requests the reader sent.

    .venv/bin/python benchmarks/nats_reader_idle.py                     # --places 100 --seconds 30
    .venv/bin/python benchmarks/nats_reader_idle.py --ack-wait 30       # the trackers' ack wait
    .venv/bin/python benchmarks/nats_reader_idle.py --session-reader    # the polling fallback, to compare

The stream, its consumers and their trackers are deleted afterwards.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from nats.js import JetStreamContext  # noqa: E402
from nats.js.api import AckPolicy, ConsumerConfig, StreamConfig  # noqa: E402
from nats.js.errors import NotFoundError  # noqa: E402

from console.brokers.base import BrokerConfig, PlaceRef  # noqa: E402
from console.brokers.nats import advisories  # noqa: E402
from console.brokers.nats.adapter import NatsAdapter  # noqa: E402
from console.brokers.nats.reader import NatsReader  # noqa: E402
from console.brokers.readers import SessionReader  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--url", default="nats://127.0.0.1:4222")
    parser.add_argument("--places", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--ack-wait", type=float, default=advisories.TRACKER_ACK_WAIT)
    parser.add_argument("--session-reader", action="store_true")
    args = parser.parse_args()

    suffix = uuid.uuid4().hex[:8]
    stream, prefix = f"DLOB_{suffix}", f"dlob.{suffix}"
    names = [f"worker_{n:04d}" for n in range(args.places)]
    places = [PlaceRef(name, stream) for name in names]
    adapter = NatsAdapter(BrokerConfig(kind="nats", url=args.url, options={"advisory_ack_wait": args.ack_wait}))

    async def make(js: JetStreamContext) -> None:
        await js.add_stream(StreamConfig(name=stream, subjects=[f"{prefix}.>"]))
        for n, name in enumerate(names):
            await js.add_consumer(stream, ConsumerConfig(durable_name=name, filter_subject=f"{prefix}.p{n}",
                                                         max_deliver=2, ack_policy=AckPolicy.EXPLICIT))

    async def remove(js: JetStreamContext) -> None:
        await js.delete_stream(stream)
        for name in names:
            for kind in advisories.REASONS:
                try:
                    await js.delete_consumer(adapter.advisory_stream, advisories.tracker_name(stream, name, kind))
                except NotFoundError:
                    pass

    try:
        adapter.check()
        adapter.call(make, timeout=300)
        reader = SessionReader(adapter, per_place=100) if args.session_reader else adapter.open_reader(per_place=100)
        started = time.monotonic()
        refused = reader.follow(places)
        print(f"followed {len(places)} places in {time.monotonic() - started:.2f} s ({len(refused)} refused)")
        requests_before = reader.requests if isinstance(reader, NatsReader) else 0
        cpu, wall, takes, taken = time.process_time(), time.monotonic(), 0, 0
        while time.monotonic() - wall < args.seconds:
            taken += sum(map(len, reader.take(max_count=1000, wait_seconds=0.5).values()))
            takes += 1
        cpu, wall = time.process_time() - cpu, time.monotonic() - wall
        print(f"{type(reader).__name__}: {len(places)} idle places, {wall:.1f} s, {takes} takes, {taken} taken")
        print(f"process CPU {cpu:.3f} s ({100 * cpu / wall:.2f} % of one core)")
        if isinstance(reader, NatsReader):
            sent = reader.requests - requests_before
            print(f"pull requests sent while idle: {sent} ({sent / wall:.1f}/s)")
        reader.close()
    finally:
        adapter.call(remove, timeout=300)
        adapter.close()


if __name__ == "__main__":
    main()
