"""A replay's publish frames, as pamqp writes them (aiormq's ``ChannelFrame.marshall`` of
basic.publish, the content header and the body, what publisher.py did at e814fb0) and as
console/brokers/rabbitmq/encoding.py writes them, in the same process, in turn.

    .venv/bin/python benchmarks/publish_frames.py              # --messages 5000 --rounds 21

Each message is a replayed dead letter as the publisher process has it: its properties and
headers decoded from custody's JSON (x-death, x-first-death-*, a tenant, our replay id) made
into ``Basic.Properties`` (``messages.encode_properties``, the same for both), and a 1 KiB body.
It prints the median CPU µs a message of each (the process's CPU time), the median of the
rounds' ratios, and checks that both wrote the same bytes.
"""

from __future__ import annotations

import argparse
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aiormq.abc import ChannelFrame  # noqa: E402
from pamqp import commands as spec  # noqa: E402
from pamqp.body import ContentBody  # noqa: E402
from pamqp.header import ContentHeader  # noqa: E402

from benchmarks.broker_bench import body_of  # noqa: E402
from benchmarks.harness import print_paired  # noqa: E402
from console.brokers.rabbitmq.encoding import content_header, publish_frames  # noqa: E402
from console.brokers.rabbitmq.messages import encode_properties  # noqa: E402

FRAME_MAX = 131_072 - 8


def messages(count: int) -> list[tuple[str, spec.Basic.Properties, bytes]]:
    died = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
    made = []
    for serial in range(count):
        headers = {
            "x-death": [{"count": 1, "reason": "expired", "queue": "orders", "time": died, "exchange": "",
                         "routing-keys": ["orders"]}],
            "x-first-death-exchange": "", "x-first-death-queue": "orders", "x-first-death-reason": "expired",
            "tenant": f"tenant-{serial % 40:02d}", "x-dlo-replay-id": f"{serial:032x}",
        }
        properties = {"content_type": "application/json", "delivery_mode": 2, "message_id": f"m-{serial}"}
        made.append(("orders", encode_properties(properties, headers), body_of(serial)))
    return made


def pamqp_frames(batch) -> bytes:
    frames = []
    for destination, properties, body in batch:
        frames += [spec.Basic.Publish(exchange="", routing_key=destination, mandatory=True),
                   ContentHeader(properties=properties, body_size=len(body)), ContentBody(body)]
    return ChannelFrame.marshall(frames=frames, channel_number=1).payload


def our_frames(batch) -> bytes:
    return b"".join(publish_frames(1, destination, content_header(1, properties, len(body)), body, FRAME_MAX)
                    for destination, properties, body in batch)


def timed(write, batch) -> tuple[float, bytes]:
    started = time.process_time()
    written = write(batch)
    return (time.process_time() - started) / len(batch) * 1e6, written


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=21)
    args = parser.parse_args()
    batch = messages(args.messages)
    times: dict[str, list[float]] = {"pamqp": [], "ours": []}
    for _ in range(args.rounds):
        theirs_us, theirs = timed(pamqp_frames, batch)
        ours_us, ours = timed(our_frames, batch)
        assert ours == theirs, "both wrote the same bytes"
        times["pamqp"].append(theirs_us)
        times["ours"].append(ours_us)
    print_paired(times, "a message (publish, header, body)")


if __name__ == "__main__":
    main()
