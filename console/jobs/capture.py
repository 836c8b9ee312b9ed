"""Capture: take a dead place's messages into custody, then acknowledge them on the broker."""

from __future__ import annotations

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from console.jobs.control import advance, checkpoint, with_broker_retry
from console.models import DeadLetter, DeadPlace, Job
from console.services.custody import mark_acked, store_captured


def run_capture(job: Job) -> str:
    place = DeadPlace.objects.select_related("broker").get(pk=job.place_id)
    limit = job.selection.get("limit")
    with place.broker.adapter() as adapter:
        drained = with_broker_retry(job, lambda: _capture_pass(job, adapter, place, limit))
        if drained:
            # Nothing is left unacknowledged in the queue, so copies committed by an earlier,
            # interrupted capture whose redelivery never came were acked after all.
            DeadLetter.objects.filter(place=place, capture_acked=False).update(capture_acked=True)
        info = with_broker_retry(job, lambda: adapter.stats(place.ref))
    DeadPlace.objects.filter(pk=place.pk).update(
        depth=info.depth, consumers=info.consumers, oldest_at=info.oldest_at, last_seen_at=timezone.now()
    )
    Job.objects.filter(pk=job.pk).update(total=job.done + job.failed)
    return f"captured {job.done} letters from {place}"


def _capture_pass(job: Job, adapter, place: DeadPlace, limit: int | None) -> bool:
    """Capture until the place is empty (True) or the limit is reached (False)."""
    batch_size = settings.DLO_BATCH_SIZE
    with adapter.open_capture(place.ref, prefetch=batch_size) as session:
        while limit is None or job.done < limit:
            checkpoint(job)
            want = batch_size if limit is None else min(batch_size, limit - job.done)
            batch = session.next_batch(want, wait_seconds=1.0)
            if not batch:
                return True
            with transaction.atomic():
                ids = store_captured(place, batch, job=job, actor=job.actor_name, reason=job.reason)
                advance(job, done=len(batch))
            session.ack(batch)
            mark_acked(ids)
    return False
