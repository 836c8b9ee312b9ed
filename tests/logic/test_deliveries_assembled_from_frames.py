"""console.brokers.rabbitmq.capture.Deliveries: a delivery's frames, as the connection reads
them, become the message aiormq would make of them; every other frame, and the frames of a
delivery that come out of order, reach aiormq's channel queue as they came."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

from pamqp import commands as spec
from pamqp.body import ContentBody
from pamqp.header import ContentHeader

from console.brokers.rabbitmq.capture import Deliveries


def feed(frames):
    """Each frame put as aiormq's connection reader puts it; what reached the consumer and
    what reached the channel's queue."""
    async def run():
        raw = SimpleNamespace(frames=asyncio.Queue(maxsize=2))  # aiormq's holds ten, then waits
        taken, queued = [], []

        async def channel_reader():
            while True:
                queued.append((await raw.frames.get())[1])

        reader = asyncio.ensure_future(channel_reader())
        Deliveries(raw, taken.append)
        for frame in frames:
            await raw.frames.put((0, frame))
        while not raw.frames.empty():
            await asyncio.sleep(0)
        reader.cancel()
        return raw, taken, queued

    # On a thread of its own: earlier tests in the suite (Playwright's sync API) may leave an
    # event loop running on this one.
    with ThreadPoolExecutor(max_workers=1) as thread:
        return thread.submit(asyncio.run, run()).result()


def deliver(tag: int) -> spec.Basic.Deliver:
    return spec.Basic.Deliver("ctag", tag, False, "", "orders.dlq")


def header(size: int, message_id: str) -> ContentHeader:
    return ContentHeader(0, size, spec.Basic.Properties(message_id=message_id))


def test_a_delivery_in_several_body_frames_is_one_message():
    declare_ok = spec.Queue.DeclareOk("orders.dlq", 0, 1)
    raw, taken, queued = feed([
        deliver(1), header(7, "a"), ContentBody(b"abc"), ContentBody(b"defg"),
        deliver(2), header(0, "empty"),
        declare_ok,
    ])
    assert [(m.delivery.delivery_tag, m.header.properties.message_id, m.body) for m in taken] == \
        [(1, "a", b"abcdefg"), (2, "empty", b"")]
    assert all(m.channel is raw for m in taken)
    assert queued == [declare_ok]  # answers go to aiormq, after the deliveries before them


def test_frames_out_of_order_go_to_aiormq_as_they_came():
    cancel = spec.Basic.CancelOk("ctag")
    frames = [deliver(1), cancel, deliver(2), header(3, "b"), ContentBody(b"x"), deliver(3), header(0, "c")]
    _, taken, queued = feed(frames)
    assert taken == []
    assert queued == frames  # aiormq's channel reader fails the channel on them, as it did
