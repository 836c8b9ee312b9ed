"""AMQP frames read off the socket with less work per frame than aiormq's own reader.

aiormq's ``FrameReceiver.get_frame`` copies each frame through a BytesIO (its value taken four
times), takes an asyncio lock and reads the seven header bytes in two reads: half of its time
per frame goes there, not into decoding, and a message is three frames (deliver, content
header, body). A capture's reader spent about a tenth of its CPU on it
(benchmarks/frame_reader.py). ``LeanFrameReceiver`` reads a frame's header and the rest in two
reads and hands them to pamqp as aiormq does, with aiormq's errors for a closed, refused or
reset connection and for a server answering with a protocol header. It drops the lock: aiormq
reads frames from one task at a time (the handshake in ``connect``, then the reader task).
A delivery's ``basic.deliver`` and content header are decoded by console/brokers/rabbitmq/decoding.py,
every other frame by pamqp.

``use_lean_frames()`` makes aiormq build it for every connection opened afterwards (aiormq's
module attribute, private: the pin in requirements.txt covers it).
"""

from __future__ import annotations

import asyncio
import struct

import aiormq.connection
from aiormq.connection import FrameReceiver, ReceivedFrame
from aiormq.exceptions import AMQPConnectionError, InvalidFrameError, ProtocolSyntaxError
from pamqp.exceptions import PAMQPException

from console.brokers.rabbitmq.decoding import unmarshal

_HEADER = struct.Struct(">BHI")  # frame type, channel, payload size


class LeanFrameReceiver(FrameReceiver):
    """aiormq's frame receiver, reading each frame in two reads without copies."""

    async def get_frame(self) -> ReceivedFrame:
        if self.reader.at_eof():
            del self.reader
            raise StopAsyncIteration
        try:
            header = await self.reader.readexactly(7)
            if not self.started:
                if header.startswith(b"AMQP"):
                    raise ProtocolSyntaxError("Unexpected AMQP protocol header")
                self.started = True
            rest = await self.reader.readexactly(_HEADER.unpack(header)[2] + 1)
        except asyncio.IncompleteReadError as e:
            raise AMQPConnectionError(
                f"Server connection unexpectedly closed. Read {len(e.partial)} bytes but {e.expected} bytes expected",
            ) from e
        except ConnectionRefusedError as e:
            raise AMQPConnectionError(f"Server connection refused: {e!r}") from e
        except ConnectionResetError as e:
            raise AMQPConnectionError(f"Server connection reset: {e!r}") from e
        except ConnectionError as e:
            raise AMQPConnectionError(f"Server connection error: {e!r}") from e
        except OSError as e:
            raise AMQPConnectionError(f"Server communication error: {e!r}") from e
        try:
            return unmarshal(header + rest)
        except PAMQPException as e:
            raise InvalidFrameError(str(e)) from e


def use_lean_frames() -> None:
    """Connections aiormq opens from now on read their frames with LeanFrameReceiver."""
    aiormq.connection.FrameReceiver = LeanFrameReceiver  # type: ignore[misc]  # replacing aiormq's class is the point
