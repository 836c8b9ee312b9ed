"""Publishing letters: one STOMP transaction per window, confirmed by the COMMIT's receipt.

BEGIN, a SEND per letter (in the transaction, no receipt of its own), then COMMIT with a
receipt: when the receipt comes, ActiveMQ has stored the whole window; an ERROR instead (after
which ActiveMQ closes the connection) means none of it was. A receipt lost to a dropped
connection leaves the window unknown: it is reported as not confirmed, and a later replay
sends it again with the same ``x-dlo-replay-id``, so a consumer can drop the duplicate.

ActiveMQ creates a queue on the first SEND to it, so a misspelt destination is created, not
refused: "no such queue" cannot be detected over STOMP, and the adapter does not pretend to.
"""

from __future__ import annotations

from collections.abc import Callable

from console.brokers.activemq import messages
from console.brokers.activemq.connection import StompLink
from console.brokers.base import BrokerError, Outgoing, PublishResult


def publish(connect: Callable[[], StompLink], batch: list[Outgoing], window: int) -> list[PublishResult]:
    """A result per message, in order. ``connect`` gives a live link (a new one after an ERROR).

    If the first window cannot be sent the BrokerError is raised, so the caller may wait and try
    again; once a window was confirmed, later failures are reported per message instead.
    """
    results: list[PublishResult] = []
    size = max(1, window)
    for start in range(0, len(batch), size):
        chunk = batch[start:start + size]
        try:
            _send_window(connect(), chunk)
        except BrokerError as exc:
            if not results:
                raise
            results.extend(PublishResult(out.key, False, exc.message) for out in batch[start:])
            return results
        results.extend(PublishResult(out.key, True) for out in chunk)
    return results


def _send_window(link: StompLink, chunk: list[Outgoing]) -> None:
    tx = link.new_id("publish-tx")
    link.send_frame("BEGIN", {"transaction": tx})
    for out in chunk:
        headers = messages.send_headers(out)
        headers.update(destination=messages.destination_of(out.destination), transaction=tx)
        link.send_frame("SEND", headers, out.body)
    link.confirmed("COMMIT", {"transaction": tx}, f"the commit of {len(chunk)} messages")
