"""aiormq's frame reader against ours (console/brokers/rabbitmq/frames.py, which decodes a
delivery's frames with console/brokers/rabbitmq/decoding.py), on the frames of dead letters as
RabbitMQ delivers them, in the same process, in turn.

    .venv/bin/python benchmarks/frame_reader.py              # --messages 5000 --rounds 21

Each message is three frames (basic.deliver, a content header with a dead letter's headers:
x-death, x-first-death-*, an exception message and stack; a 1 KiB body). The frames are fed to
an asyncio StreamReader in 64 KiB pieces, as a socket would hand them over, and read back one
frame at a time until every message is read, by one reader and then the other in each round
(short rounds in pairs: this machine's speed drifts from one minute to the next). It prints
the median CPU µs a message of each reader (the process's CPU time), the median of the rounds'
ratios, and checks that both read the same frames.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from aiormq.connection import FrameReceiver  # noqa: E402
from pamqp import commands as spec  # noqa: E402
from pamqp.body import ContentBody  # noqa: E402
from pamqp.frame import marshal  # noqa: E402
from pamqp.header import ContentHeader  # noqa: E402

from benchmarks.harness import print_paired  # noqa: E402
from console.brokers.rabbitmq.frames import LeanFrameReceiver  # noqa: E402

BODY = b'{"order_id": 1234567, "sku": "gift wrap", "note": "' + b"x" * 960 + b'"}'


def frames_of(count: int) -> bytes:
    died = datetime(2026, 11, 26, 12, 0, tzinfo=UTC)
    headers = {
        "x-death": [{"count": 1, "reason": "expired", "queue": "orders", "time": died, "exchange": "",
                     "routing-keys": ["orders"]}],
        "x-first-death-exchange": "", "x-first-death-queue": "orders", "x-first-death-reason": "expired",
        "x-exception-message": "card declined for order 1234567",
        "x-exception-stacktrace": "com.acme.CardDeclined: card declined\n\tat com.acme.Pay.charge(Pay.java:7)\n" * 3,
        "tenant": "tenant-07", "trace-id": "4bf92f3577b34da6a3ce929d0e0e4736",
    }
    properties = spec.Basic.Properties(content_type="application/json", delivery_mode=2, headers=headers,
                                       message_id="m-1234567", timestamp=died)
    chunks = []
    for tag in range(1, count + 1):
        chunks.append(marshal(spec.Basic.Deliver("ctag", tag, False, "", "orders.dlq"), 1))
        chunks.append(marshal(ContentHeader(0, len(BODY), properties), 1))
        chunks.append(marshal(ContentBody(BODY), 1))
    return b"".join(chunks)


async def read_all(receiver_class, data: bytes, frames: int) -> tuple[float, list]:
    reader = asyncio.StreamReader(limit=1 << 20)
    receiver = receiver_class(reader)
    receiver.started = True
    got = []
    started = time.process_time()
    offset = 0
    while len(got) < frames:
        while offset < len(data) and len(reader._buffer) < (1 << 16):  # as a socket hands data over
            reader.feed_data(data[offset:offset + (1 << 16)])
            offset += 1 << 16
        got.append(await receiver.get_frame())
    return time.process_time() - started, got


def summary(received) -> tuple:
    """What a frame says: its channel, kind and content."""
    _, channel, frame = received
    if isinstance(frame, ContentHeader):
        return channel, "header", frame.body_size, frame.properties.headers, frame.properties.message_id
    if isinstance(frame, ContentBody):
        return channel, "body", frame.value
    return channel, type(frame).__name__, frame.delivery_tag


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=5_000)
    parser.add_argument("--rounds", type=int, default=21)
    args = parser.parse_args()
    data = frames_of(args.messages)
    frames = 3 * args.messages
    times: dict[str, list[float]] = {"aiormq": [], "ours": []}
    for _ in range(args.rounds):
        theirs_s, theirs = asyncio.run(read_all(FrameReceiver, data, frames))
        ours_s, ours = asyncio.run(read_all(LeanFrameReceiver, data, frames))
        assert [summary(f) for f in theirs] == [summary(f) for f in ours], "both read the same frames"
        times["aiormq"].append(theirs_s / args.messages * 1e6)
        times["ours"].append(ours_s / args.messages * 1e6)
    print_paired(times, "a message (3 frames)")


if __name__ == "__main__":
    main()
