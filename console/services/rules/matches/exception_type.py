"""``exception_type``: the consumer's exception, by a regular expression."""

from __future__ import annotations

from console.services.rules.matches.base import PatternFinds


class ExceptionType(PatternFinds):
    field = "exception_type"
    help = ("A regular expression (PostgreSQL's, any case) found in the consumer's exception type; "
            '"exactly" in quotes')
    example = "^CardDeclined$"
