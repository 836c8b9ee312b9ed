"""Counts in words for what the console writes (job summaries, notes, notifications, command
output): ``counted(1, "letter")`` is "1 letter", never "1 letters". Pages use the template
filter ``pluralize`` for the same."""

from __future__ import annotations

from django.utils.translation import ngettext


def counted(count: int, singular: str, plural: str = "") -> str:
    """``count`` and the noun in its number: ``counted(2, "letter")`` -> "2 letters"; an
    irregular plural is given (``counted(n, "match", "matches")``)."""
    return f"{count} {ngettext(singular, plural or singular + 's', count)}"
