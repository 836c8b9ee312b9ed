"""How many messages a capture asks the broker for at a time.

A batch is at most ``DLO_BATCH_SIZE`` letters and holds about ``DLO_BATCH_BYTES`` of bodies:
a queue of 1 KiB messages is taken a thousand at a time, one of 1 MiB messages sixteen at a
time, so the reader, the worker and a batch's transaction hold a bounded amount whatever the
messages weigh. The first batch is small, since nothing is known of the sizes yet; each next
one is sized by the bodies of the batch before it (the queue's sizes may change along it).
"""

from __future__ import annotations

from collections.abc import Sequence

#: The first batch of a capture, before any body has been seen.
FIRST_BATCH = 8


class BatchSizer:
    def __init__(self, max_count: int, max_bytes: int) -> None:
        self.max_count = max(1, max_count)
        self.max_bytes = max(1, max_bytes)
        self.count = min(self.max_count, FIRST_BATCH)

    def next_count(self, left: int | None = None) -> int:
        """How many to ask for next; ``left`` caps it (a capture's limit)."""
        return self.count if left is None else max(1, min(self.count, left))

    def saw(self, body_sizes: Sequence[int]) -> None:
        """Size the next batch by the sizes of this one's bodies."""
        if body_sizes:
            mean = max(1, sum(body_sizes) // len(body_sizes))
            self.count = max(1, min(self.max_count, self.max_bytes // mean))
