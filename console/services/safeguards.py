"""What stops automation from replaying a letter: the replay-loop quarantine (a letter whose
lineage came back too often) and the breaker of its origin (too many failures in a row).
Rules (console.rules) replay and forward only the letters these let through; a person may
still act on any letter."""

from __future__ import annotations

from django.db.models import Exists, OuterRef, QuerySet

from console.models import Origin


def rules_may_replay(letters: QuerySet) -> QuerySet:
    """``letters`` without the quarantined ones and those whose origin's breaker is open."""
    open_breaker = Origin.objects.filter(
        breaker_opened_at__isnull=False, broker_id=OuterRef("broker_id"), scope=OuterRef("place__scope"),
        name=OuterRef("origin_queue"),
    )
    return letters.filter(quarantined_at__isnull=True).exclude(Exists(open_breaker))
