"""``reason``: why the broker says the letter died."""

from __future__ import annotations

from console.services.rules.matches.base import TextEquals


class Reason(TextEquals):
    field = "reason"
    help = "Why the broker says the letter died, exactly (rejected, expired, maxlen, delivery_limit...)"
    example = "rejected"
