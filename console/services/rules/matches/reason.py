"""``reason``: why the broker says the letter died."""

from __future__ import annotations

from console.services.rules.matches.base import WordMatches


class Reason(WordMatches):
    fields = ("reason",)
    help = ('Why the broker says the letter died (rejected, expired, maxlen, delivery_limit...): '
            'a part, in any case; "exactly" in quotes')
    example = "rejected"
