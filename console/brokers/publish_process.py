"""A replay's publishing done in a child process (console.brokers.child_process): the worker
marks and records letters in PostgreSQL while the child turns them into the broker's messages
(JSON decoded, frames encoded) and publishes them with confirms, each on its own interpreter
lock. The worker hands it Publications (plain values) and gets back each letter's outcome.
Killed, or left by its parent, the child takes nothing with it: the letters it had not seen
confirmed stay ``replaying`` in custody and are published again, with the same replay ids.

    python -m console.brokers.publish_process    (started by ChildPublisher, never by hand)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from console.brokers import child_process
from console.brokers.base import BrokerConfig, PublishResult
from console.brokers.publication import Publication, to_outgoing


class ChildPublisher(child_process.Child):
    """The parent's half: an adapter's ``publish`` whose broker connection lives in a child."""

    role = "replay's publisher process"
    after_death = "what it did not see confirmed is published again"

    def __init__(self, config: BrokerConfig, *, subject: str) -> None:
        super().__init__(__name__, ("open", config), subject=subject)

    def publish(self, publications: Sequence[Publication], *, window: int) -> list[PublishResult]:
        """As the adapter's ``publish``. A child that died (its publish failed with it, and the
        job publishes again) is replaced first."""
        self.restart_if_gone()
        results = self.call(("publish", [tuple(p) for p in publications], window))
        return [PublishResult(*result) for result in results]


def serve(next_command: Callable[[], tuple], reply: Callable[[tuple], None]) -> None:
    """The child's half: open the adapter the first command names, then publish until ``close``."""
    from console.brokers import get_adapter

    _, config = next_command()
    opened: dict[str, Any] = {}

    def open_adapter() -> None:
        opened["adapter"] = get_adapter(config)

    child_process.answer(reply, open_adapter)
    if "adapter" not in opened:
        return

    def publish(publications: list[tuple], window: int) -> list[tuple]:
        results = opened["adapter"].publish([to_outgoing(Publication(*p)) for p in publications], window=window)
        return [(result.key, result.ok, result.error) for result in results]

    with opened["adapter"]:
        while (command := next_command())[0] != "close":
            kind, *args = command
            child_process.answer(reply, lambda: publish(*args))
    reply(("ok", None))


if __name__ == "__main__":
    child_process.main(serve)
