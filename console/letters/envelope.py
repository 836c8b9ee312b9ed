"""The failure envelope: one broker-neutral account of why and where a letter died."""

from __future__ import annotations

import hashlib
import re
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any

# Parts of an exception message that differ between occurrences of the same failure.
_VOLATILE = [
    (re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"), "<uuid>"),
    (re.compile(r"\b0x[0-9a-fA-F]+\b"), "<hex>"),
    (re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})?"), "<time>"),
    (re.compile(r"\d+(?:\.\d+)?"), "<n>"),  # ids and amounts inside words too: ORD-123, 30s
    (re.compile(r"'[^']*'|\"[^\"]*\""), "<str>"),
    (re.compile(r"\s+"), " "),
]

#: How many hex digits a failure group's fingerprint has (the filters take fewer: its first ones).
FINGERPRINT_DIGITS = 16


def normalize_message(message: str) -> str:
    text = message[:2000]
    for pattern, replacement in _VOLATILE:
        text = pattern.sub(replacement, text)
    return text.strip()


def top_frames(stack: str, count: int = 3) -> list[str]:
    """The first frames of a stack trace, without line numbers (they move between builds)."""
    frames = []
    for line in stack.splitlines():
        line = line.strip()
        if line.startswith("at ") or line.startswith("File "):
            frames.append(re.sub(r"(:\d+|line \d+)", "", line))
        if len(frames) == count:
            break
    return frames


@dataclass
class FailureEnvelope:
    """Where a letter came from and why it died, read from the broker's and frameworks' headers."""

    origin_address: str = ""  # exchange, topic, address or subject it was first published to
    origin_queue: str = ""  # the subscription (queue, consumer, group) it failed in
    routing_key: str = ""
    reason: str = ""  # rejected, expired, maxlen, delivery_limit, max_deliver, poison_ack, ...
    death_count: int = 0
    first_failed_at: datetime | None = None
    last_failed_at: datetime | None = None
    exception_type: str = ""
    exception_message: str = ""
    exception_stack: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    # The distributed trace it failed in (console.tracing.context): 32 and 16 lowercase hex
    # digits, "" when the letter carries no trace context. Not part of the fingerprint: one
    # failure recurs across many traces.
    trace_id: str = ""
    span_id: str = ""

    def fingerprint(self) -> str:
        """Groups letters that failed the same way, across brokers.

        Exception type + normalized message + top frames + origin subscription; without an
        exception, the reason stands in for it.
        """
        parts = [
            self.exception_type or f"reason:{self.reason}",
            normalize_message(self.exception_message),
            "|".join(top_frames(self.exception_stack)),
            self.origin_queue,
        ]
        return hashlib.sha256("\x1f".join(parts).encode("utf-8", "surrogatepass")).hexdigest()[:FINGERPRINT_DIGITS]

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)
