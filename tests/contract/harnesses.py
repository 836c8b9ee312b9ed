"""One harness per adapter kind: what the contract tests need to know about a broker.

A harness plays the applications around the console on a real server: it makes a uniquely
named origin (queue, subject or stream) with its dead place, has a REAL failing consumer kill
messages into it (reject, NACK, ``max_deliver`` exceeded, pending over the threshold), reads
what the origin's consumer receives afterwards, and reads the dead place's raw state straight
from the broker (not through the adapter under test). The kinds' own test helpers do the
broker work; a harness only gives them one shape.

Every harness answers in the same terms: bodies are bytes, headers a ``dict[str, str]``.
"""

from __future__ import annotations

import contextlib
import socket
import threading
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from console.models import Broker
from console.services.brokers import do_add_broker

#: A password no broker accepts; the tests look for it in every error and audit row.
WRONG_SECRET = "contract-wrong-secret-7f3a"


@dataclass
class BadBroker:
    """A broker definition that cannot work, the addresses its errors may name (RabbitMQ's
    discovery talks to the management API, its check to AMQP), and whether retrying can help."""

    settings: dict[str, Any]
    addresses: tuple[str, ...]
    permanent: bool


class Harness:
    """The kind-independent face of one broker for one test. Subclasses fill in the broker work."""

    kind = ""
    #: The place's name and scope as discovery reports them, and the origin it names.
    place_name = ""
    place_scope = ""
    origin = ""
    #: The name of the destination a move goes to (made by ``make_move_target``).
    move_target = ""

    def __init__(self, operator) -> None:
        self.operator = operator
        self.suffix = uuid.uuid4().hex[:8]

    def add_broker(self) -> Broker:
        """The Broker row for the real server, added through the service as an operator would."""
        return do_add_broker(actor=self.operator, name=f"{self.kind}-{self.suffix}", kind=self.kind,
                             **self.broker_settings())

    def broker_settings(self) -> dict[str, Any]:
        raise NotImplementedError

    def kill(self, bodies: list[bytes]) -> None:
        """Publish the bodies to the origin and have its failing consumer kill every one;
        returns once the dead place holds them all."""
        raise NotImplementedError

    def dead_state(self) -> list:
        """The dead place's raw state, read from the broker: one entry per message in order with
        whatever delivery counter the broker keeps (a bare count where it cannot be read safely)."""
        raise NotImplementedError

    def dead_count(self) -> int:
        raise NotImplementedError

    def origin_receives(self) -> list[tuple[bytes, dict[str, str]]]:
        """What the origin's consumer receives now (taken and acknowledged)."""
        raise NotImplementedError

    def make_move_target(self) -> str:
        raise NotImplementedError

    def target_receives(self) -> list[tuple[bytes, dict[str, str]]]:
        raise NotImplementedError

    def wrong_credentials(self) -> contextlib.AbstractContextManager[BadBroker]:
        raise NotImplementedError

    def unreachable(self) -> contextlib.AbstractContextManager[BadBroker]:
        raise NotImplementedError

    def cleanup(self) -> None:
        raise NotImplementedError


def _text(value: Any) -> str:
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# -- in memory ----------------------------------------------------------------------------------


class MemoryHarness(Harness):
    """No server: the ``MemoryBroker`` itself, with a consumer that rejects into ``<queue>.dlq``."""

    kind = "memory"

    def __init__(self, operator) -> None:
        from console.brokers.memory.adapter import MemoryBroker

        super().__init__(operator)
        self.fake = MemoryBroker.named(f"contract-{self.suffix}")
        self.origin = f"orders-{self.suffix}"
        self.place_name = f"{self.origin}.dlq"
        self.fake.queue(self.origin)
        self.fake.queue(self.place_name)

    def broker_settings(self) -> dict[str, Any]:
        return {"url": f"memory://contract-{self.suffix}"}

    def kill(self, bodies: list[bytes]) -> None:
        from console.brokers.memory.adapter import Message

        work, dead = self.fake.queue(self.origin), self.fake.queue(self.place_name)
        work.extend(Message(body, {"trace": str(i)}) for i, body in enumerate(bodies))
        while work:  # the consumer fails each one: the broker moves it to the dead queue
            message = work.popleft()
            message.headers.update({"x-origin-queue": self.origin, "x-reason": "rejected"})
            dead.append(message)

    def dead_state(self) -> list:
        return [(m.body, m.redelivered) for m in self.fake.queue(self.place_name)]

    def dead_count(self) -> int:
        return len(self.fake.queue(self.place_name))

    def _take(self, queue: str) -> list[tuple[bytes, dict[str, str]]]:
        taken = self.fake.queue(queue)
        got = [(m.body, {k: _text(v) for k, v in m.headers.items()}) for m in taken]
        taken.clear()
        return got

    def origin_receives(self) -> list[tuple[bytes, dict[str, str]]]:
        return self._take(self.origin)

    def make_move_target(self) -> str:
        self.move_target = f"parking-{self.suffix}"
        self.fake.queue(self.move_target)
        return self.move_target

    def target_receives(self) -> list[tuple[bytes, dict[str, str]]]:
        return self._take(self.move_target)

    @contextlib.contextmanager
    def wrong_credentials(self) -> Iterator[BadBroker]:
        self.fake.password = "the-right-one"
        try:
            yield BadBroker({"url": f"memory://contract-{self.suffix}", "password": WRONG_SECRET},
                            (f"memory://contract-{self.suffix}",), permanent=True)
        finally:
            self.fake.password = ""

    @contextlib.contextmanager
    def unreachable(self) -> Iterator[BadBroker]:
        self.fake.down = True
        try:
            yield BadBroker({"url": f"memory://contract-{self.suffix}", "password": WRONG_SECRET},
                            (f"memory://contract-{self.suffix}",), permanent=False)
        finally:
            self.fake.down = False

    def cleanup(self) -> None:
        from console.brokers.memory.adapter import MemoryBroker

        MemoryBroker.instances.pop(f"contract-{self.suffix}", None)


# -- RabbitMQ -----------------------------------------------------------------------------------


class RabbitMQHarness(Harness):
    """A work queue dead-lettering into ``<work>.dlq``; its consumer rejects (requeue=false)."""

    kind = "rabbitmq"
    place_scope = "/"

    def __init__(self, operator) -> None:
        from tests.rabbitmq.kit import RabbitKit

        super().__init__(operator)
        self.kit = RabbitKit()
        self.origin = self.kit.name("orders")
        self.place_name = self.kit.queue(f"{self.origin}.dlq")
        self.kit.queue(self.origin, {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": self.place_name})

    def broker_settings(self) -> dict[str, Any]:
        from tests.rabbitmq.kit import MANAGEMENT_URL, PASSWORD, USER

        return {"url": "amqp://127.0.0.1:5672/%2F", "management_url": MANAGEMENT_URL,
                "username": USER, "password": PASSWORD}

    def kill(self, bodies: list[bytes]) -> None:
        for i, body in enumerate(bodies):
            self.kit.publish(self.origin, body, headers={"trace": str(i)})
        self.kit.reject(self.origin, count=len(bodies))
        self.kit.wait_depth(self.place_name, len(bodies))

    def dead_state(self) -> list:
        # Reading a RabbitMQ message at all redelivers it: only the count can be read safely.
        return [self.dead_count()]

    def dead_count(self) -> int:
        return self.kit.depth(self.place_name)

    def _take(self, queue: str) -> list[tuple[bytes, dict[str, str]]]:
        return [(m.body, {k: _text(v) for k, v in (m.headers or {}).items()}) for m in self.kit.drain(queue)]

    def origin_receives(self) -> list[tuple[bytes, dict[str, str]]]:
        return self._take(self.origin)

    def make_move_target(self) -> str:
        self.move_target = self.kit.queue(self.kit.name("parking"))
        return self.move_target

    def target_receives(self) -> list[tuple[bytes, dict[str, str]]]:
        return self._take(self.move_target)

    @contextlib.contextmanager
    def wrong_credentials(self) -> Iterator[BadBroker]:
        yield BadBroker({**self.broker_settings(), "password": WRONG_SECRET}, ("127.0.0.1:5672", "127.0.0.1:15672"),
                        permanent=True)

    @contextlib.contextmanager
    def unreachable(self) -> Iterator[BadBroker]:
        port = _free_port()
        yield BadBroker({**self.broker_settings(), "url": f"amqp://127.0.0.1:{port}/%2F",
                         "management_url": f"http://127.0.0.1:{port}", "password": WRONG_SECRET},
                        (f"127.0.0.1:{port}",), permanent=False)

    def cleanup(self) -> None:
        self.kit.close()


# -- ActiveMQ Classic (STOMP) -------------------------------------------------------------------


class _RefusingStompServer:
    """Answers one CONNECT the way ActiveMQ's authentication plugin does. The test broker asks
    for no credentials (Debian's default), so a refused login cannot be had from it."""

    REFUSAL = (b"ERROR\ncontent-type:text/plain\nmessage:User name [olga] or password is invalid.\n\n"
               b"java.lang.SecurityException: User name [olga] or password is invalid.\n\x00")

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.thread = threading.Thread(target=self._answer, daemon=True)
        self.thread.start()

    def _answer(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                conn, _ = self.server.accept()
                with conn:
                    conn.recv(4096)  # the CONNECT frame
                    conn.sendall(self.REFUSAL)

    def close(self) -> None:
        self.server.close()
        self.thread.join(timeout=5)


class ActiveMQHarness(Harness):
    """An ``indiv.*`` queue dying into its own ``DLQ.indiv.*``; its consumer NACKs (a poison ack)."""

    kind = "activemq"

    def __init__(self, operator) -> None:
        from tests.activemq.conftest import ACTIVEMQ_URL, Names
        from tests.activemq.kit import Client

        super().__init__(operator)
        self.url = ACTIVEMQ_URL
        self.names = Names()
        self.origin, self.place_name = self.names.individual("orders")
        self.client = Client(ACTIVEMQ_URL, self.names.suffix)

    def broker_settings(self) -> dict[str, Any]:
        # Configured, not probed by convention: probing creates the queues it browses.
        return {"url": self.url, "options": {"dead_places": [self.place_name]}}

    def kill(self, bodies: list[bytes]) -> None:
        for i, body in enumerate(bodies):
            self.client.send(self.origin, body, headers={"trace": str(i)})
        self.client.fail_all(self.origin, len(bodies))
        assert len(self.client.wait_for(self.place_name, len(bodies))) == len(bodies)

    def dead_state(self) -> list:
        return [(f.body, f.headers.get("message-id"), f.headers.get("redelivered"))
                for f in self.client.browse(self.place_name)]

    def dead_count(self) -> int:
        return len(self.client.browse(self.place_name))

    def _take(self, queue: str) -> list[tuple[bytes, dict[str, str]]]:
        return [(f.body, dict(f.headers)) for f in self.client.receive_all(queue, quiet_seconds=0.5)]

    def origin_receives(self) -> list[tuple[bytes, dict[str, str]]]:
        return self._take(self.origin)

    def make_move_target(self) -> str:
        self.move_target = self.names("parking")
        return self.move_target

    def target_receives(self) -> list[tuple[bytes, dict[str, str]]]:
        return self._take(self.move_target)

    @contextlib.contextmanager
    def wrong_credentials(self) -> Iterator[BadBroker]:
        refusing = _RefusingStompServer()
        try:
            yield BadBroker({"url": f"stomp://127.0.0.1:{refusing.port}", "username": "olga",
                             "password": WRONG_SECRET}, (f"127.0.0.1:{refusing.port}",), permanent=True)
        finally:
            refusing.close()

    @contextlib.contextmanager
    def unreachable(self) -> Iterator[BadBroker]:
        port = _free_port()
        yield BadBroker({"url": f"stomp://127.0.0.1:{port}", "password": WRONG_SECRET},
                        (f"127.0.0.1:{port}",), permanent=False)

    def cleanup(self) -> None:
        for queue in self.names.made:
            self.client.drain_mine(queue)
        self.client.close()


# -- NATS JetStream -----------------------------------------------------------------------------


class NatsHarness(Harness):
    """A stream and a durable consumer with ``max_deliver``; its worker NAKs until the server
    gives up (MAX_DELIVERIES). The dead place is the consumer; its messages stay in the stream."""

    kind = "nats"

    def __init__(self, operator) -> None:
        from console.brokers.nats import advisories
        from tests.nats.conftest import FailingConsumer, Nats

        super().__init__(operator)
        self.nats = Nats()
        self.nats(lambda js: advisories.ensure_stream(js, advisories.STREAM))
        self.source = FailingConsumer(self.nats)
        self.place_name = self.origin = self.source.consumer
        self.place_scope = self.source.stream
        self.sequences: list[int] = []

    def broker_settings(self) -> dict[str, Any]:
        from tests.nats.conftest import NATS_URL

        return {"url": NATS_URL}

    def kill(self, bodies: list[bytes]) -> None:
        self.sequences += [self.source.publish(body, headers={"trace": str(i)}) for i, body in enumerate(bodies)]
        self.source.fail_until_dead(self.source.advisories_recorded() + len(bodies))

    def dead_state(self) -> list:
        stored = [(seq, self.source.stored(seq) is not None) for seq in self.sequences]
        return [stored, self.source.consumer_state()]

    def dead_count(self) -> int:
        """Deaths not yet taken into custody: the advisories the console's tracker consumers
        (one per advisory kind) have not acknowledged. Captured messages stay in their stream."""
        from nats.js.errors import NotFoundError

        from console.brokers.nats import advisories

        async def outstanding(js) -> int:
            total = 0
            for kind in advisories.REASONS:
                name = advisories.tracker_name(self.source.stream, self.source.consumer, kind)
                try:
                    info = await js.consumer_info(advisories.STREAM, name)
                except NotFoundError:  # not made yet: discovery makes them
                    continue
                total += (info.num_pending or 0) + (info.num_ack_pending or 0)
            return total

        return self.nats(outstanding)

    def _take(self, subject: str) -> list[tuple[bytes, dict[str, str]]]:
        got = []
        for message in self.source.fetch(wait=0.5):
            self.nats(lambda js, m=message: m.ack_sync())
            if message.subject == subject:
                got.append((message.data, dict(message.headers or {})))
        return got

    def origin_receives(self) -> list[tuple[bytes, dict[str, str]]]:
        return self._take(self.source.subject())

    def make_move_target(self) -> str:
        self.move_target = self.source.subject("parking")
        return self.move_target

    def target_receives(self) -> list[tuple[bytes, dict[str, str]]]:
        return self._take(self.move_target)

    @contextlib.contextmanager
    def wrong_credentials(self) -> Iterator[BadBroker]:
        # The shared server has no users; a private one of our own wants a password.
        from tests.nats.conftest import PrivateServer

        server = PrivateServer("--user", "dlo", "--pass", "right")
        server.start()
        try:
            yield BadBroker({"url": server.url, "username": "dlo", "password": WRONG_SECRET},
                            (f"127.0.0.1:{server.port}",), permanent=True)
        finally:
            server.stop()

    @contextlib.contextmanager
    def unreachable(self) -> Iterator[BadBroker]:
        port = _free_port()
        yield BadBroker({"url": f"nats://127.0.0.1:{port}", "password": WRONG_SECRET},
                        (f"127.0.0.1:{port}",), permanent=False)

    def cleanup(self) -> None:
        self.source.cleanup()
        self.nats.close()


# -- Redis Streams ------------------------------------------------------------------------------


class RedisHarness(Harness):
    """A stream and a consumer group whose worker never acknowledges and keeps reclaiming, so
    the entries' delivery counts climb over the threshold (3)."""

    kind = "redis"

    def __init__(self, operator) -> None:
        import redis

        from tests.redis_streams.conftest import REDIS_URL, Names
        from tests.redis_streams.consumers import PoisonedGroup

        super().__init__(operator)
        self.client = redis.Redis.from_url(REDIS_URL)
        self.names = Names()
        self.group = PoisonedGroup(self.client, self.names("orders"), "billing").create()
        self.place_name, self.place_scope = self.group.group, self.group.stream
        self.origin = self.group.stream
        self.acl_user = ""

    def broker_settings(self) -> dict[str, Any]:
        from tests.redis_streams.conftest import REDIS_URL, TEST_OPTIONS

        return {"url": REDIS_URL, "options": dict(TEST_OPTIONS)}

    def kill(self, bodies: list[bytes]) -> None:
        for i, body in enumerate(bodies):
            self.client.xadd(self.origin, {"body": body, "trace": str(i)})
        self.group.fail(times=4)  # delivered four times: over the threshold of three

    def dead_state(self) -> list:
        pending = self.client.xpending_range(self.origin, self.group.group, "-", "+", 10_000)
        return [(row["message_id"], row["times_delivered"], row["consumer"]) for row in pending]

    def dead_count(self) -> int:
        return len(self.group.deliveries())

    @staticmethod
    def _entries(entries) -> list[tuple[bytes, dict[str, str]]]:
        got = []
        for _, fields in entries:
            fields = dict(fields)
            body = fields.pop(b"body", b"")
            got.append((body, {_text(k): _text(v) for k, v in fields.items()}))
        return got

    def origin_receives(self) -> list[tuple[bytes, dict[str, str]]]:
        return self._entries(self.group.read_new())

    def make_move_target(self) -> str:
        self.move_target = self.names("parking")
        self.client.xgroup_create(self.move_target, "auditors", id="$", mkstream=True)
        return self.move_target

    def target_receives(self) -> list[tuple[bytes, dict[str, str]]]:
        from tests.redis_streams.consumers import entries_of

        entries = entries_of(self.client.xreadgroup("auditors", "reader", {self.move_target: ">"}))
        return self._entries(entries)

    @contextlib.contextmanager
    def wrong_credentials(self) -> Iterator[BadBroker]:
        # The shared server lets anyone in as ``default``: an ACL user of our own wants a password.
        user = f"dlo-contract-{self.suffix}"
        self.client.acl_setuser(user, enabled=True, passwords=["+right-password"], keys=["*"], commands=["+@all"])
        try:
            yield BadBroker({**self.broker_settings(), "username": user, "password": WRONG_SECRET},
                            ("127.0.0.1:6379",), permanent=True)
        finally:
            self.client.acl_deluser(user)

    @contextlib.contextmanager
    def unreachable(self) -> Iterator[BadBroker]:
        port = _free_port()
        yield BadBroker({"url": f"redis://127.0.0.1:{port}/0", "password": WRONG_SECRET},
                        (f"127.0.0.1:{port}",), permanent=False)

    def cleanup(self) -> None:
        self.names.cleanup(self.client)
        self.client.close()


HARNESSES: dict[str, type[Harness]] = {
    h.kind: h for h in (MemoryHarness, RabbitMQHarness, ActiveMQHarness, NatsHarness, RedisHarness)
}
