"""``older_than_seconds``: letters in custody for at least this long."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.db.models import Q
from django.utils import timezone

from console.services.rules.matches.base import CountBound


class OlderThanSeconds(CountBound):
    help = "In custody at least this many seconds (since capture)"
    example = 3600

    def condition(self, value: Any, *, alone: bool) -> Q:
        return Q(captured_at__lte=timezone.now() - timedelta(seconds=value))
