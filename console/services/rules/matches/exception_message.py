"""``exception_message``: the consumer's exception message, by a regular expression."""

from __future__ import annotations

from console.services.rules.matches.base import PatternFinds


class ExceptionMessage(PatternFinds):
    field = "exception_message"
    help = ("A regular expression (PostgreSQL's, any case) found in the consumer's exception message; "
            '"exactly" in quotes')
    example = "timed out"
