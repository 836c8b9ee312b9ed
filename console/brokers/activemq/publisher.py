"""Publishing letters: one STOMP transaction per window, confirmed by the COMMIT's receipt.

BEGIN, a SEND per letter (in the transaction, no receipt of its own), then COMMIT with a
receipt: when the receipt comes, ActiveMQ has stored the whole window; an ERROR instead (after
which ActiveMQ closes the connection) means none of it was. A receipt lost to a dropped
connection leaves the window unknown: it is reported as not confirmed, and a later replay
sends it again with the same ``x-dlo-replay-id``, so a consumer can drop the duplicate.

ActiveMQ creates a queue on the first SEND to it, so a misspelt destination is created, not
refused: "no such queue" cannot be detected over STOMP, and the adapter does not pretend to.
What it does refuse, before sending, are names ActiveMQ would fan out: a wildcard
(``orders.>``, ``orders.*``) sends to every matching queue, and a comma makes a composite
destination that sends to each part.
"""

from __future__ import annotations

from collections.abc import Callable

from console.brokers.activemq import messages
from console.brokers.activemq.connection import StompLink
from console.brokers.base import BrokerError, Outgoing, PublishResult

_FAN_OUT = (">", "*", ",")


def refusal(destination: str) -> str:
    """Why a destination name is refused, or "" when it names one queue or topic."""
    name = messages.destination_of(destination).split("/", 2)[-1]
    if not name.strip():
        return "no destination named"
    if any(mark in name for mark in _FAN_OUT):
        return f"{destination!r} would reach several destinations (wildcard or composite name)"
    return ""


def publish(connect: Callable[[], StompLink], batch: list[Outgoing], window: int) -> list[PublishResult]:
    """A result per message, in order. ``connect`` gives a live link (a new one after an ERROR).

    If nothing could be sent yet when the connection fails, the BrokerError is raised, so the
    caller may wait and try again; once a window was confirmed, later failures are reported
    per message instead.
    """
    results: dict[int, PublishResult] = {}
    sendable = []
    for index, out in enumerate(batch):
        why = refusal(out.destination)
        if why:
            results[index] = PublishResult(out.key, False, why)
        else:
            sendable.append(index)
    size = max(1, window)
    confirmed_any = False
    for start in range(0, len(sendable), size):
        chunk = sendable[start:start + size]
        try:
            _send_window(connect(), [batch[i] for i in chunk])
        except BrokerError as exc:
            if not confirmed_any:
                raise
            for index in sendable[start:]:
                results[index] = PublishResult(batch[index].key, False, exc.message)
            break
        confirmed_any = True
        for index in chunk:
            results[index] = PublishResult(batch[index].key, True)
    return [results[index] for index in range(len(batch))]


def _send_window(link: StompLink, chunk: list[Outgoing]) -> None:
    tx = link.new_id("publish-tx")
    link.send_frame("BEGIN", {"transaction": tx})
    for out in chunk:
        headers = messages.send_headers(out)
        headers.update(destination=messages.destination_of(out.destination), transaction=tx)
        link.send_frame("SEND", headers, out.body)
    link.confirmed("COMMIT", {"transaction": tx}, f"the commit of {len(chunk)} messages")
