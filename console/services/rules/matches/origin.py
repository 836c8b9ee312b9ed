"""``origin``: the queue or address the letter died from."""

from __future__ import annotations

from typing import Any

from django.db.models import Q

from console.services.rules.matches.base import MatchKind
from console.services.rules.values import text


class Origin(MatchKind):
    help = "The queue or address the letter died from (exactly)"
    example = "orders"

    def clean(self, value: Any, name: str) -> str:
        return text(value, name)

    def condition(self, value: Any, *, alone: bool) -> Q:
        return Q(origin_queue=value) | Q(origin_address=value)
