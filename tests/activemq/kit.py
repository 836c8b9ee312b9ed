"""A test's own STOMP clients on the real ActiveMQ: producers, a failing consumer, an origin
consumer, and a drain for cleaning up. They use the adapter's ``StompLink`` only as a wire."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

from console.brokers.activemq.connection import StompLink
from console.brokers.base import BrokerConfig

#: Every message a test sends carries this header with the test's suffix, so clean-up can drain
#: the shared ActiveMQ.DLQ of its own letters only (a selector cannot name a dashed header).
TAG = "dlotest"


def link(url: str) -> StompLink:
    return StompLink(BrokerConfig(kind="activemq", url=url))


class Client:
    """Sends, fails and receives messages the way an application on ActiveMQ would."""

    def __init__(self, url: str, tag: str) -> None:
        self.link = link(url)
        self.tag = tag

    def send(self, queue: str, body: bytes, *, bytes_message: bool = False, persistent: bool = True,
             headers: dict[str, Any] | None = None) -> None:
        frame = {"destination": f"/queue/{queue}", TAG: self.tag, **(headers or {})}
        if persistent:
            frame["persistent"] = "true"
        if bytes_message:
            frame["content-length"] = str(len(body))
        self.link.confirmed("SEND", frame, f"a send to {queue}", body)

    def fail_all(self, queue: str, count: int) -> list[Any]:
        """A consumer that NACKs ``count`` messages: ActiveMQ dead-letters each at once."""
        return self.fail_many({queue: count})[queue]

    def fail_many(self, counts: dict[str, int]) -> dict[str, list[Any]]:
        """A consumer of each queue that NACKs its count of messages. The frames are pipelined on
        the one connection, which the broker handles in order: the receipt of the last
        UNSUBSCRIBE says every NACK before it was handled (a receipt for each frame made 200
        queues take seconds)."""
        subs = {}
        for queue in counts:
            subs[queue] = self.link.new_id("sub")
            self.link.send_frame("SUBSCRIBE", {"destination": f"/queue/{queue}", "id": subs[queue],
                                               "ack": "client-individual"})
        failed: dict[str, list[Any]] = {}
        for queue, count in counts.items():
            failed[queue] = []
            for _ in range(count):
                frame = self.link.next_message(subs[queue], 10)
                assert frame is not None, f"the failing consumer of {queue} got only {len(failed[queue])} of {count}"
                self.link.send_frame("NACK", {"id": frame.headers["ack"]})
                failed[queue].append(frame)
        *others, last = subs.values()
        for sub in others:
            self.link.send_frame("UNSUBSCRIBE", {"id": sub})
        self.link.unsubscribe(last)
        return failed

    def receive_all(self, queue: str, *, quiet_seconds: float = 1.5) -> list[Any]:
        """Everything that reaches a consumer of ``queue`` until it is quiet for a while."""
        return self.receive(f"/queue/{queue}", quiet_seconds=quiet_seconds)

    def receive(self, destination: str, *, quiet_seconds: float = 1.5, selector: str = "") -> list[Any]:
        headers = {"ack": "auto"}
        if selector:
            headers["selector"] = selector
        sub = self.link.subscribe(destination, headers)
        got = []
        while (frame := self.link.next_message(sub, quiet_seconds)) is not None:
            got.append(frame)
        self.link.unsubscribe(sub)
        return got

    def browse(self, queue: str) -> list[Any]:
        """The queue's messages as a browser sees them (consumes nothing)."""
        sub = self.link.subscribe(f"/queue/{queue}", {"browser": "true"})
        got = []
        while (frame := self.link.next_message(sub, 10)) is not None and frame.headers.get("browser") != "end":
            got.append(frame)
        self.link.unsubscribe(sub)
        return got

    def mine(self, queue: str) -> list[Any]:
        """This test's messages in a queue (the shared DLQ holds other tests' too)."""
        return [f for f in self.browse(queue) if f.headers.get(TAG) == self.tag]

    def wait_for(self, queue: str, count: int, timeout: float = 10.0) -> list[Any]:
        """This test's messages in ``queue`` once there are ``count`` (dead-lettering is async)."""
        deadline = time.monotonic() + timeout
        while len(found := self.mine(queue)) < count and time.monotonic() < deadline:
            time.sleep(0.1)
        return found

    def drain_mine(self, queue: str) -> None:
        self.receive(f"/queue/{queue}", quiet_seconds=0.3, selector=f"{TAG} = '{self.tag}'")

    def close(self) -> None:
        self.link.close()


JMS_CONSUMER = Path(__file__).with_name("FailingJmsConsumer.java")
ACTIVEMQ_JARS = os.environ.get("DLO_TEST_ACTIVEMQ_JARS", "/usr/share/activemq/lib/*")


def fail_with_jms(queue: str, max_redeliveries: int) -> None:
    """A real JMS consumer (Java, OpenWire) whose listener throws on every delivery, until its
    redelivery policy gives up and the broker dead-letters the message with a cause."""
    done = subprocess.run(
        ["java", "-cp", ACTIVEMQ_JARS, str(JMS_CONSUMER), queue, str(max_redeliveries)],
        capture_output=True, text=True, timeout=60,
    )
    assert "failed all deliveries" in done.stdout, done.stdout + done.stderr
