"""Fixtures for the NATS JetStream tests: the real nats-server on 127.0.0.1:4222, a stream and a
durable consumer of their own per test (uuid names, deleted afterwards), and a worker that makes
real dead letters by failing the way applications do (NAK until max_deliver, or AckTerm)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest
from nats.aio.client import Client
from nats.js import JetStreamContext
from nats.js.api import AckPolicy, ConsumerConfig, RawStreamMsg, StreamConfig, StreamSource
from nats.js.errors import NotFoundError

from console.brokers import BrokerConfig, PlaceRef
from console.brokers.asyncloop import LoopThread
from console.brokers.nats import advisories
from console.brokers.nats.connection import connect

NATS_URL = "nats://127.0.0.1:4222"
T = TypeVar("T")


async def keep_record(js: JetStreamContext, advisory_stream: str = advisories.STREAM) -> None:
    """A mirror of the advisory stream, made before the first death a test counts: the console
    deletes the advisories it captured, the mirror keeps every one the server stored (an hour)."""
    try:
        await js.stream_info(f"{advisory_stream}_RECORD")
    except NotFoundError:
        await js.add_stream(StreamConfig(name=f"{advisory_stream}_RECORD", max_age=3600,
                                         mirror=StreamSource(name=advisory_stream)))


async def recorded(js: JetStreamContext, subject: str, advisory_stream: str = advisories.STREAM) -> int:
    """Advisories the server has stored in the advisory stream on these subjects, captured or not
    (counted in the mirror ``keep_record`` made, which copies only what the stream stored)."""
    info = await js.stream_info(f"{advisory_stream}_RECORD", subjects_filter=subject)
    return sum((info.state.subjects or {}).values())


async def waiting(js: JetStreamContext, subject: str, advisory_stream: str = advisories.STREAM) -> int:
    """Death advisories still in the advisory stream on these subjects (captured ones are deleted
    from a stream the console made; a site's own stream may keep other kinds too)."""
    info = await js.stream_info(advisory_stream, subjects_filter=subject)
    return sum(count for name, count in (info.state.subjects or {}).items()
               if name.split(".")[4] in advisories.REASONS)


class Nats:
    """A plain nats-py connection for the test's own moves (publishing, failing, inspecting)."""

    def __init__(self, url: str = NATS_URL) -> None:
        self.config = BrokerConfig(kind="nats", url=url)
        self._loop = LoopThread("nats-tests")
        self.client: Client = self._loop.run(connect(self.config), 10)

    def __call__(self, action: Callable[[JetStreamContext], Awaitable[T]], timeout: float = 30) -> T:
        async def run() -> T:
            if self.client.is_closed:  # the server went away and came back
                self.client = await connect(self.config)
            return await action(self.client.jetstream())

        return self._loop.run(run(), timeout)

    def close(self) -> None:
        self._loop.stop(self.client.close())


@pytest.fixture(scope="session")
def nats_tool():
    tool = Nats()
    # The advisory stream must exist before the first death: the console makes it on check().
    tool(lambda js: advisories.ensure_stream(js, advisories.STREAM))
    tool(keep_record)
    yield tool
    tool.close()


class FailingConsumer:
    """A stream ``DLOT_<id>`` on ``dlot.<id>.>`` and a durable pull consumer ``worker_<id>``
    (max_deliver=2, ack_wait=1s) whose worker fails on purpose."""

    MAX_DELIVER = 2

    def __init__(self, nats: Nats, *, advisory_stream: str = advisories.STREAM, **stream_options: Any) -> None:
        self.nats = nats
        self.advisory_stream = advisory_stream
        suffix = uuid.uuid4().hex[:10]
        self.stream = f"DLOT_{suffix}"
        self.consumer = f"worker_{suffix}"
        self.subject_prefix = f"dlot.{suffix}"
        nats(lambda js: js.add_stream(StreamConfig(name=self.stream, subjects=[f"{self.subject_prefix}.>"],
                                                   **stream_options)))
        nats(lambda js: js.add_consumer(self.stream, ConsumerConfig(
            durable_name=self.consumer, max_deliver=self.MAX_DELIVER, ack_wait=1.0, ack_policy=AckPolicy.EXPLICIT,
        )))
        self._subscription = nats(lambda js: js.pull_subscribe_bind(self.consumer, self.stream))
        nats(lambda js: keep_record(js, advisory_stream))

    @property
    def place(self) -> PlaceRef:
        return PlaceRef(self.consumer, self.stream)

    def subject(self, leaf: str = "orders") -> str:
        return f"{self.subject_prefix}.{leaf}"

    def publish(self, body: bytes, headers: dict[str, str] | None = None, leaf: str = "orders") -> int:
        """Publish to the stream; returns the stream sequence."""
        ack = self.nats(lambda js: js.publish(self.subject(leaf), body, headers=headers))
        return ack.seq

    def publish_raw_headers(self, body: bytes, header_lines: list[bytes], leaf: str = "orders") -> None:
        """Publish over a bare socket, for header bytes nats-py refuses to send (not UTF-8)."""
        block = b"NATS/1.0\r\n" + b"".join(line + b"\r\n" for line in header_lines) + b"\r\n"
        subject = self.subject(leaf).encode()
        with socket.create_connection(("127.0.0.1", 4222), timeout=5) as wire:
            wire.recv(4096)  # INFO
            wire.sendall(b'CONNECT {"headers":true,"verbose":false,"pedantic":false}\r\n'
                         + b"HPUB " + subject + b" %d %d\r\n" % (len(block), len(block) + len(body))
                         + block + body + b"\r\nPING\r\n")
            answer = b""
            while b"PONG" not in answer and b"-ERR" not in answer:
                answer += wire.recv(4096)
        assert b"-ERR" not in answer, answer

    def fetch(self, count: int = 10, wait: float = 1.0) -> list:
        async def take(js):
            try:
                return await self._subscription.fetch(count, timeout=wait)
            except TimeoutError:
                return []

        return self.nats(take)

    def fail_until_dead(self, deaths: int) -> None:
        """NAK every delivery until the server gives up on ``deaths`` messages (MAX_DELIVERIES)."""
        deadline = time.monotonic() + 20
        while self.advisories_recorded() < deaths and time.monotonic() < deadline:
            for message in self.fetch(wait=0.5):
                self.nats(lambda js: message.nak())  # noqa: B023 - called at once
        assert self.advisories_recorded() >= deaths, "the server never gave up on the messages"

    def terminate_next(self) -> int:
        """The worker decides a message can never succeed: AckTerm (MSG_TERMINATED)."""
        before = self.advisories_recorded()
        (message,) = self.fetch(1)
        self.nats(lambda js: message.term())
        self.wait_for_advisories(before + 1)
        return message.metadata.sequence.stream

    def advisories_recorded(self) -> int:
        """Advisories about this consumer the server has stored in the console's advisory stream."""
        subject = f"{advisories.PREFIX}.*.{self.stream}.{self.consumer}"
        return self.nats(lambda js: recorded(js, subject, self.advisory_stream))

    def advisories_waiting(self) -> int:
        """Advisories about this consumer still in the advisory stream (captured ones are deleted
        from a stream the console made)."""
        subject = f"{advisories.PREFIX}.*.{self.stream}.{self.consumer}"
        return self.nats(lambda js: waiting(js, subject, self.advisory_stream))

    def wait_for_advisories(self, count: int) -> None:
        deadline = time.monotonic() + 10
        while self.advisories_recorded() < count and time.monotonic() < deadline:
            time.sleep(0.05)
        assert self.advisories_recorded() >= count, "the advisory never reached the advisory stream"

    def stored(self, seq: int) -> RawStreamMsg | None:
        try:
            return self.nats(lambda js: js.get_msg(self.stream, seq))
        except NotFoundError:
            return None

    def consumer_state(self) -> tuple:
        """What a consumer of the stream would notice if something had touched its messages."""
        info = self.nats(lambda js: js.consumer_info(self.stream, self.consumer))
        return (info.delivered.stream_seq, info.delivered.consumer_seq, info.ack_floor.stream_seq,
                info.num_ack_pending, info.num_redelivered, info.num_pending)

    def cleanup(self) -> None:
        async def remove(js: JetStreamContext) -> None:
            await self._subscription.unsubscribe()
            actions = [lambda: js.delete_stream(self.stream)]
            for kind in advisories.REASONS:
                actions += [
                    lambda kind=kind: js.delete_consumer(self.advisory_stream,
                                                         advisories.tracker_name(self.stream, self.consumer, kind)),
                    lambda kind=kind: js.purge_stream(
                        self.advisory_stream, subject=advisories.place_filter(self.stream, self.consumer, kind)),
                ]
            for action in actions:
                try:
                    await action()
                except NotFoundError:
                    pass

        self.nats(remove)


@pytest.fixture
def failing_consumer(nats_tool):
    """Make a fresh source; call it again for more (e.g. with ``max_age=1``)."""
    made: list[FailingConsumer] = []

    def make(**stream_options: Any) -> FailingConsumer:
        made.append(FailingConsumer(nats_tool, **stream_options))
        return made[-1]

    yield make
    for source in made:
        source.cleanup()


@pytest.fixture
def nats_broker(db):
    from console.services.brokers import do_add_broker

    return do_add_broker(actor="tests", name="nats-local", kind="nats", url=NATS_URL)


class PrivateServer:
    """A nats-server of our own on a free port, for the tests that stop a server, need
    credentials, or shape streams in ways the shared server must not see."""

    def __init__(self, *arguments: str) -> None:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.url = f"nats://127.0.0.1:{self.port}"
        self.arguments = arguments
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        binary = shutil.which("nats-server") or "/usr/sbin/nats-server"
        self.process = subprocess.Popen([binary, "-a", "127.0.0.1", "-p", str(self.port), *self.arguments],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2).close()
                return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("the private nats-server did not start")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)
            self.process = None


@pytest.fixture
def private_server(tmp_path):
    """With JetStream, its store under tmp (kept across stop/start)."""
    server = PrivateServer("-js", "-sd", str(tmp_path / "jetstream"))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def guarded_server():
    """Without JetStream, wanting user ``dlo`` with password ``right``."""
    server = PrivateServer("--user", "dlo", "--pass", "right")
    server.start()
    yield server.url
    server.stop()
