"""``origin``: the queue or address the letter died from."""

from __future__ import annotations

from console.services.rules.matches.base import WordMatches


class Origin(WordMatches):
    fields = ("origin_queue", "origin_address")
    help = 'The queue or address the letter died from: a part, in any case; "exactly" in quotes'
    example = '"orders"'
