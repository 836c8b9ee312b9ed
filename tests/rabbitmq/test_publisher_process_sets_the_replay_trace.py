"""A replay of many letters publishes through a publisher process (console.brokers.publish_process),
which makes the messages itself: the trace context DLO_REPLAY_TRACE=link (the default) gives
them is set there too, from the Publication handed over (the batch span's context when the
console's telemetry is on, random ids when it is off; none for a letter that carried none)."""

from __future__ import annotations

import pytest

from console.brokers.publication import Publication
from console.brokers.publish_process import ChildPublisher
from console.tracing.replay import FAILED_CONTEXT_HEADER
from tests.rabbitmq.conftest import rabbit_config

pytestmark = pytest.mark.rabbitmq

FAILED = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
BATCH_SPAN = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"


def test_the_publisher_process_gives_each_message_its_new_context(kit, monkeypatch):
    monkeypatch.delenv("DLO_REPLAY_TRACE", raising=False)
    queue = kit.queue(kit.name("traced-publisher"))
    publisher = ChildPublisher(rabbit_config(), subject="test")
    try:
        results = publisher.publish([
            Publication(1, queue, "", b"spanned", f'{{"traceparent": "{FAILED}", "tracestate": "a=b"}}', "{}", "r1",
                        BATCH_SPAN),
            Publication(2, queue, "", b"random", f'{{"traceparent": "{FAILED}"}}', "{}", "r2"),
            Publication(3, queue, "", b"none carried", "{}", "{}", "r3"),
        ], window=10)
    finally:
        publisher.close()
    assert [(r.key, r.ok) for r in results] == [(1, True), (2, True), (3, True)]
    got = {message.body: message.headers for message in kit.drain(queue)}
    assert got[b"spanned"] == {"traceparent": BATCH_SPAN, FAILED_CONTEXT_HEADER: FAILED, "x-dlo-replay-id": "r1"}
    fresh = got[b"random"]["traceparent"]
    assert fresh.startswith("00-") and fresh.split("-")[1] != FAILED.split("-")[1] and fresh != BATCH_SPAN
    assert got[b"random"][FAILED_CONTEXT_HEADER] == FAILED
    assert got[b"none carried"] == {"x-dlo-replay-id": "r3"}  # no context to link, no span of the console's
