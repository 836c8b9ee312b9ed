"""Capture sessions: a client-individual subscription to a dead place.

ActiveMQ pushes up to ``prefetch`` messages (``activemq.prefetchSize``); each stays the
console's, unacknowledged, until ``ack`` acknowledges a committed batch in one STOMP
transaction (BEGIN, ACK..., COMMIT with a receipt), so a batch leaves the broker together.
Closing unsubscribes and disconnects without acknowledging: ActiveMQ puts what was not
acknowledged back in the queue, in place, flagged ``redelivered`` (which is how custody knows
to match an earlier copy). Over STOMP that counts toward no broker limit; only a JMS client's
own redelivery policy would count it, and the console is no JMS client.
"""

from __future__ import annotations

from collections.abc import Sequence

from console.brokers.activemq import messages
from console.brokers.activemq.connection import StompLink
from console.brokers.base import BrokerError, CaptureSession, Received

#: Once a batch has begun, prefetched messages are already on their way: wait only briefly
#: for each of the rest.
FOLLOWING_WAIT_SECONDS = 0.2


class StompCapture(CaptureSession):
    def __init__(self, link: StompLink, place: str, prefetch: int) -> None:
        self.link = link
        self.place = place
        self.sub = link.subscribe(messages.destination_of(place), {
            "ack": "client-individual", "activemq.prefetchSize": str(max(1, prefetch)),
        })

    def next_batch(self, max_count: int, wait_seconds: float) -> list[Received]:
        batch: list[Received] = []
        wait = wait_seconds
        while len(batch) < max_count:
            frame = self.link.next_message(self.sub, wait)
            if frame is None:
                break
            batch.append(messages.taken(frame, self.place))
            wait = min(wait_seconds, FOLLOWING_WAIT_SECONDS)
        return batch

    def ack(self, batch: Sequence[Received]) -> None:
        if not batch:
            return
        tx = self.link.new_id("ack-tx")
        self.link.send_frame("BEGIN", {"transaction": tx})
        for message in batch:
            self.link.send_frame("ACK", {"id": message.token, "transaction": tx})
        self.link.confirmed("COMMIT", {"transaction": tx}, f"the acknowledgement of {len(batch)} letters")

    def close(self) -> None:
        """Give back what was not acknowledged. Safe twice."""
        try:
            if self.link.alive and self.sub:
                self.link.unsubscribe(self.sub)
        except BrokerError:
            pass  # the connection is going anyway, and with it every unacknowledged message
        finally:
            self.sub = ""
            self.link.close()
