"""A STOMP link read for many subscriptions at once.

``StompLink`` waits for one thing at a time (a receipt, the next message of one subscription)
and files every other frame that arrives meanwhile under its subscription id. A reader of
hundreds of places, or a count of many places at once, wants the opposite: wait until a frame
of *any* subscription arrives, then look at what came. ``MultiLink`` adds that wait, and
pipelines SUBSCRIBE and UNSUBSCRIBE frames (all sent, then all receipts awaited) so following
a hundred queues costs one round trip, not a hundred.

The wait blocks on the link's inbox (a ``queue.Queue``, so a condition wait): an idle link
costs stomp.py's receiving thread, asleep on its socket, and nothing else.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterable
from typing import Any

from console.brokers.activemq.connection import CONNECT_TIMEOUT_SECONDS, StompLink
from console.brokers.base import BrokerConfig


class MultiLink(StompLink):
    """A StompLink whose caller waits for whichever subscription is served next."""

    def __init__(self, config: BrokerConfig, *, connect_timeout: float = CONNECT_TIMEOUT_SECONDS) -> None:
        #: Subscriptions a MESSAGE frame was filed under since the caller last looked (``filed_since``).
        self.filed: set[str] = set()
        super().__init__(config, connect_timeout=connect_timeout)

    def _file(self, frame: Any) -> None:
        super()._file(frame)
        self.filed.add(frame.headers.get("subscription", ""))

    def filed_since(self) -> set[str]:
        """The subscriptions that got a MESSAGE frame since the last call."""
        filed, self.filed = self.filed, set()
        return filed

    def wait_any(self, timeout: float) -> bool:
        """Handle the next frame to arrive (filed under its subscription, or a receipt), waiting
        up to ``timeout`` seconds; False when none came. An ERROR frame or a lost connection
        raises BrokerError, as every wait of the link does."""
        return self._pump(time.monotonic() + max(0.0, timeout), waiting_for="a message")

    def waiting(self, sub: str) -> deque[Any]:
        """The MESSAGE frames of subscription ``sub`` received and not yet taken."""
        return self._messages.setdefault(sub, deque())

    def subscribe_all(self, subscriptions: Iterable[tuple[str, dict[str, Any]]]) -> list[str]:
        """SUBSCRIBE to each (destination, headers) in one go: every frame is sent, then every
        receipt awaited. Returns the subscription ids, in order."""
        sent = []
        for destination, headers in subscriptions:
            sub, receipt = self.new_id("sub"), self.new_id("receipt")
            self.send_frame("SUBSCRIBE", {**headers, "destination": destination, "id": sub, "receipt": receipt})
            sent.append((sub, receipt, destination))
        for _sub, receipt, destination in sent:
            self.wait_receipt(receipt, f"the subscription to {destination}")
        return [sub for sub, _receipt, _destination in sent]

    def unsubscribe_all(self, subs: Iterable[str]) -> None:
        """UNSUBSCRIBE each in one go (sent, then receipts awaited); what each had received and
        not taken is dropped here, and, unacknowledged, goes back to the queue."""
        receipts = []
        for sub in subs:
            receipt = self.new_id("receipt")
            self.send_frame("UNSUBSCRIBE", {"id": sub, "receipt": receipt})
            receipts.append((sub, receipt))
        for sub, receipt in receipts:
            self.wait_receipt(receipt, "the end of a subscription")
            self._messages.pop(sub, None)
