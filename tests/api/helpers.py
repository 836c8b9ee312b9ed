"""Building messages for the in-memory broker's dead places."""

from __future__ import annotations

from console.brokers.memory.adapter import Message


def dead_message(body: bytes | str, *, origin: str = "orders", reason: str = "rejected",
                 headers: dict | None = None, **properties) -> Message:
    """A message as the memory broker keeps it in ``<origin>.dlq``."""
    if isinstance(body, str):
        body = body.encode()
    return Message(body, {"x-origin-queue": origin, "x-reason": reason, **(headers or {})}, properties)
