"""Events written before migration 0018 get what they concern from what they named, so a user
limited to place A reads the old audit of A and nothing else: a named place; else the letters
named; else the other events of the same job; else a named broker as a whole; a broker created
after the event is not the one it named; an event naming none of these is seen only without
limits."""

from __future__ import annotations

import importlib
import uuid
from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from console.models import AuditEvent, AuditEventPlace

pytestmark = pytest.mark.django_db

BACKFILL = importlib.import_module("console.migrations.0018_scope_on_every_read").BACKFILL


def _old_event(action: str, **fields) -> AuditEvent:
    """An event as written before 0018: no rows of what it concerns."""
    fields.setdefault("at", timezone.now())
    return AuditEvent.objects.create(action=action, actor_name="old", prev_hash="0" * 64, hash=uuid.uuid4().hex,
                                     **fields)


def test_old_events_are_matched_to_their_places_and_read_in_scope(places_a_and_b, signed_in_as):
    a, b = places_a_and_b.a, places_a_and_b.b
    old = {
        "in_a": _old_event("old.capture", broker_name="mem", place_name="orders.dlq"),
        "letters_of_b": _old_event("old.replay", letter_ids=[places_a_and_b.b_letter.pk]),
        "job_over_a": _old_event("old.requested", job_id=9999, letter_ids=[places_a_and_b.a_letter.pk]),
        "same_job": _old_event("old.pause", job_id=9999),
        "broker": _old_event("old.broker", broker_name="mem"),
        "before_the_broker": _old_event("old.gone", broker_name="mem", place_name="orders.dlq",
                                        at=a.broker.created_at - timedelta(days=1)),
        "nothing": _old_event("old.role"),
    }
    with connection.cursor() as cursor:
        cursor.execute(BACKFILL)

    def concerns(event):
        return set(AuditEventPlace.objects.filter(event=event).values_list("broker_id", "place_id"))

    broker = a.broker_id
    assert concerns(old["in_a"]) == {(broker, a.pk)}
    assert concerns(old["letters_of_b"]) == {(broker, b.pk)}
    assert concerns(old["job_over_a"]) == concerns(old["same_job"]) == {(broker, a.pk)}
    assert concerns(old["broker"]) == {(broker, None)}
    assert concerns(old["before_the_broker"]) == concerns(old["nothing"]) == set()

    seen = {e["action"] for e in signed_in_as(places_a_and_b.otto).get("/api/audit/").json()["results"]}
    assert {"old.capture", "old.requested", "old.pause"} <= seen
    assert not {"old.replay", "old.broker", "old.gone", "old.role"} & seen
