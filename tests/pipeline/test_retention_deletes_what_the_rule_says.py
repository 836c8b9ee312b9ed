"""retention: per consumer, by its last activation (a replay job that published to it); old
bodies erased in custody and in the lake; every deletion audited."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction

from console.jobs.kinds import replays
from console.models import AuditEvent, DeadLetter, Job
from console.pipeline import lake as lakefs
from console.pipeline.archive import archive
from console.pipeline.retention import run_retention
from console.pipeline.schema import BODIES, SCHEMAS
from console.services import audit
from console.services.audit import verify_chain
from tests.pipeline.conftest import NOW

pytestmark = [pytest.mark.spark, pytest.mark.django_db]
DAYS = 30


def activation(broker, origin: str, *, days_ago: float, failed: int = 0) -> Job:
    """A finished replay job that published letters back to ``origin``."""
    job = Job.objects.create(kind="replay", status="succeeded", actor_name="olga", reason="fixed", failed=failed,
                             finished_at=NOW - timedelta(days=days_ago))
    with transaction.atomic():
        audit.record("replay", actor="olga", job=job, broker=broker, target=origin, letter_ids=[1],
                     outcome="confirmed")
    return job


def test_retention_deletes_exactly_what_the_rule_says(spark, lake, custody):
    broker = custody.broker()
    place = custody.place(broker, "all.dlq")
    resolved = dict(state="replayed", resolved_days_ago=1)
    # billing: last activation 5 days ago succeeded -> every record captured before it goes.
    activation(broker, "billing", days_ago=50, failed=2)
    activation(broker, "billing", days_ago=5)
    billing_old = custody.letter(place, origin="billing", captured_days_ago=6, **resolved)
    billing_older = custody.letter(place, origin="billing", captured_days_ago=60, **resolved)
    billing_after = custody.letter(place, origin="billing", captured_days_ago=4, **resolved)
    billing_held = custody.letter(place, origin="billing", captured_days_ago=6)
    # shipping: last activation 10 days ago refused some -> records older than 30 days before it go.
    activation(broker, "shipping", days_ago=10, failed=1)
    shipping_old = custody.letter(place, origin="shipping", captured_days_ago=45, **resolved)
    shipping_recent = custody.letter(place, origin="shipping", captured_days_ago=35, state="failed",
                                     resolved_days_ago=33, body=b"shared body")
    # stock: never activated -> records older than 30 days go.
    stock_old = custody.letter(place, origin="stock", captured_days_ago=31, state="purged", body_erased=True)
    stock_new = custody.letter(place, origin="stock", captured_days_ago=20, state="failed", body=b"only body",
                               resolved_days_ago=20)
    lone = custody.letter(place, origin="stock", captured_days_ago=40, state="failed", body=b"erase me",
                          resolved_days_ago=39)
    same_body = custody.letter(place, origin="stock", captured_days_ago=2, body=b"shared body")
    archive(lake, spark=spark)
    unarchived_old = custody.letter(place, origin="stock", captured_days_ago=90, **resolved)

    report = run_retention(lake, replays=replays(), days=DAYS, spark=spark, now=NOW)

    gone = {billing_old.id, billing_older.id, shipping_old.id, stock_old.id, lone.id}
    kept = {billing_after.id, billing_held.id, shipping_recent.id, stock_new.id, same_body.id, unarchived_old.id}
    assert set(DeadLetter.objects.values_list("id", flat=True)) == kept
    assert report.deleted == 5
    deletions = AuditEvent.objects.filter(action="retention.delete")
    assert sorted(i for event in deletions for i in event.letter_ids) == sorted(gone)
    assert sum(event.count for event in deletions) == 5
    assert {(e.target, e.count) for e in deletions} == {("billing", 2), ("shipping", 1), ("stock", 2)}

    # Bodies of letters resolved more than 30 days ago: erased in custody, the tombstone stays.
    erased = DeadLetter.objects.get(pk=shipping_recent.id)
    assert erased.body_erased and erased.body_bytes == b"" and erased.origin_queue == "shipping"
    assert not DeadLetter.objects.get(pk=stock_new.id).body_erased
    (erasure,) = AuditEvent.objects.filter(action="retention.erase_body")
    assert erasure.letter_ids == [shipping_recent.id]
    # In the lake: "erase me" (its letter was resolved 39 days ago) goes; "shared body" stays,
    # since a held letter still has the same content (and so does the empty body).
    bodies = {row.body for row in lakefs.read(spark, lake, BODIES, SCHEMAS[BODIES]).collect()}
    assert bodies == {b"shared body", b"only body", b""}
    (lake_event,) = AuditEvent.objects.filter(action="retention.lake_bodies")
    assert lake_event.count == 1 and report.erased_in_lake == 1
    assert verify_chain().ok
