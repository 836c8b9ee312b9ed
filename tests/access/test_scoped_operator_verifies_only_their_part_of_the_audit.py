"""``/api/audit/verify/`` tells a user limited to place A how many of A's events held, and where
the chain breaks only when that event is A's: not how large the whole audit is, nor which of
B's events was tampered with."""

from __future__ import annotations

import pytest
from django.db import connection
from rest_framework.test import APIClient

from console.access.scope import visible
from console.models import AuditEvent

pytestmark = pytest.mark.django_db


def _verify(user) -> dict:
    client = APIClient()
    client.force_authenticate(user)
    answer = client.get("/api/audit/verify/")
    assert answer.status_code == 200
    return answer.json()


def _tamper(event: AuditEvent) -> None:
    with connection.cursor() as cursor:
        cursor.execute("ALTER TABLE console_auditevent DISABLE TRIGGER USER")
        cursor.execute("UPDATE console_auditevent SET reason = 'changed' WHERE id = %s", [event.pk])
        cursor.execute("ALTER TABLE console_auditevent ENABLE TRIGGER USER")


def test_a_limited_user_counts_their_events_and_learns_no_id_of_others(places_a_and_b, people):
    otto = places_a_and_b.otto
    theirs = visible(otto, AuditEvent.objects.all())
    assert 0 < theirs.count() < AuditEvent.objects.count()
    assert _verify(otto) == {"ok": True, "checked": theirs.count(), "broken_at": None, "problem": ""}
    assert _verify(people["admin"])["checked"] == AuditEvent.objects.count()

    outside = AuditEvent.objects.exclude(pk__in=theirs.values("pk")).order_by("id").first()
    _tamper(outside)
    told = _verify(otto)
    assert (told["ok"], told["broken_at"]) == (False, None)
    assert "outside what you may see" in told["problem"]
    assert _verify(people["admin"])["broken_at"] == outside.pk
