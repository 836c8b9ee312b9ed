"""Capture: take a dead place's messages into custody, then acknowledge them on the broker.

A batch is committed first and acknowledged after; its pending-ack rows are deleted in the
next batch's transaction (one statement fewer per batch), and by the end of the pass.

The broker is read in a child process (console.brokers.capture_process) unless it lives in
this one. The consumer's prefetch is three batches: one being stored, one being prepared, and
one the child decodes meanwhile. Batches are sized by their bodies (console.brokers.batch_sizing).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, wait

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from console.brokers import Adapter, CaptureSession, PlaceRef, Received
from console.brokers.batch_sizing import BatchSizer
from console.brokers.capture_process import ChildCapture
from console.brokers.readers import PlaceReader
from console.jobs.control import advance, advance_many, checkpoint, place_of, with_broker_retry
from console.models import DeadPlace, Job
from console.services.custody import (
    PlaceBatch,
    PreparedBatch,
    fixed_columns,
    mark_acked,
    prepare_batch,
    settle,
    store_many,
    store_prepared,
)
from console.services.search_rows import fill_later, written_later
from console.tracing import telemetry
from console.wording import counted


def run_capture(job: Job, limit: int | None = None) -> str:
    """Capture the job's place, at most ``limit`` letters (all it holds without one)."""
    place = place_of(job)
    with place.broker.adapter() as adapter:
        drained = with_broker_retry(job, lambda: capture_pass(
            adapter, place, job=job, reason=job.reason, limit=_left(job, limit),
            stored=lambda count: advance(job, done=count),
        ))
        if drained:
            settle(place, adapter)
        info = with_broker_retry(job, lambda: adapter.stats(place.ref))
    DeadPlace.objects.filter(pk=place.pk).update(
        depth=info.depth, consumers=info.consumers, oldest_at=info.oldest_at, last_seen_at=timezone.now()
    )
    Job.objects.filter(pk=job.pk).update(total=job.done + job.failed)
    return f"captured {counted(job.done, 'letter')} from {place}"


def _left(job: Job, limit: int | None) -> Callable[[], int | None]:
    return lambda: None if limit is None else limit - job.done


def capture_pass(adapter: Adapter, place: DeadPlace, *, job: Job, reason: str, limit: Callable[[], int | None],
                 stored: Callable[[int], None] = lambda count: None, until: float | None = None,
                 wait_seconds: float = 1.0, in_child: bool = True) -> bool:
    """Capture from one place until it is empty (True), or until ``limit()`` letters are left
    to take or the monotonic clock passes ``until`` (False).

    ``stored(count)`` runs inside each batch's transaction with the number of letters the
    batch adds to the job (a redelivered copy of a letter this job stored before is not
    counted again). The job is checked for pause and cancel between batches.

    While PostgreSQL stores a batch, a second thread takes the next one from the broker (the
    prefetch holds three), made ready for custody by the reader process (or by that thread).
    The letters' search rows are written after the pass (console.services.search_rows). Each
    batch is sized by the bodies of the one before it (BatchSizer). A batch is acknowledged only
    after its own commit, so a stop at any point leaves it on the broker.

    The broker is read in a child process (``in_child``) unless its adapter lives in this one:
    worth it for a big place, not for a few letters (the keeper's trickles), where starting the
    child costs more than reading them.
    """
    batch_size = settings.DLO_BATCH_SIZE
    sizer = BatchSizer(batch_size, settings.DLO_BATCH_BYTES)
    acked: list[int] = []

    fixed = fixed_columns(place, job)

    def next_ready(session: CaptureSession, count: int) -> PreparedBatch:
        """The next batch, made ready for custody: by the reader process when there is one."""
        if isinstance(session, ChildCapture):
            batch = PreparedBatch(*session.next_prepared(count, wait_seconds, fixed))
        else:
            batch = prepare_batch(place, session.next_batch(count, wait_seconds=wait_seconds), job)
        sizer.saw([row["body_size"] for row in batch.rows])
        return batch

    def take(session: CaptureSession, worker: ThreadPoolExecutor, in_hand: int) -> Future[PreparedBatch] | None:
        """Start taking the next batch and making it ready, on the worker thread; it is empty
        when the place is. None when the limit or the time is up."""
        left = limit()
        left = None if left is None else left - in_hand
        if (left is not None and left <= 0) or (until is not None and time.monotonic() >= until):
            return None
        return worker.submit(next_ready, session, sizer.next_count(left))

    def batch_of(taken: Future[PreparedBatch] | None) -> PreparedBatch | None:
        """The batch a take brought, waiting for it; None when the take did not start."""
        return taken.result() if taken is not None else None

    taken: Future[PreparedBatch] | None = None
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="capture-take") as worker, \
            _open_capture(adapter, place, prefetch=3 * batch_size, in_child=in_child, sizer=sizer) as session, \
            written_later():
        try:
            taken = take(session, worker, 0)
            current = batch_of(taken)
            while current:
                checkpoint(job)
                taken = take(session, worker, len(current))
                with telemetry.span("capture batch", {"dlo.job.id": job.pk,
                                                     "messaging.batch.message_count": len(current.rows)}) as span:
                    with transaction.atomic():
                        mark_acked(acked)
                        result = store_prepared(place, current, job=job, actor=job.actor_name, reason=reason)
                        stored(result.counted)
                    # The session is used by one thread at a time: the next batch is in hand
                    # before this one is acknowledged.
                    following = batch_of(taken)
                    acked = []
                    session.ack(current.items)  # type: ignore[arg-type]  # ack reads each one's token, an Arrival's too
                    acked = result.ids
                    span.set_attribute("dlo.capture.stored", result.counted)
                if following is None:  # the limit counted this batch whole: look again
                    taken = take(session, worker, 0)
                    following = batch_of(taken)
                current = following
            return current is not None
        finally:
            if taken is not None:
                wait([taken])  # the session closes only once the worker has let go of it
            mark_acked(acked)
            fill_later()


def _open_capture(adapter: Adapter, place: DeadPlace, *, prefetch: int, in_child: bool,
                  sizer: BatchSizer) -> CaptureSession:
    """The place's capture session, read in a child process unless the broker lives in this
    one (or ``in_child`` is false): decoding the broker's messages then no longer waits for the
    interpreter lock that preparing and storing them holds."""
    if adapter.in_process or not in_child:
        return adapter.open_capture(place.ref, prefetch=prefetch)
    return ChildCapture(adapter.config, place.ref, prefetch=prefetch, sizer=sizer)


def keep_taken(reader: PlaceReader, taken: Mapping[PlaceRef, list[Received]],
               kept: Mapping[PlaceRef, tuple[DeadPlace, Job]]) -> None:
    """Store what a reader took from many kept places (console.jobs.automation.reading) in one
    transaction, then acknowledge each place's messages: the order of ``capture_pass``
    (committed before acknowledged, a redelivered copy matched to the letter stored before),
    through the same custody step for all the places of a take
    (console.services.custody.store_many). Each place's keep job counts its letters in that
    transaction. A failed acknowledgement leaves their copies pending: messages not
    acknowledged come back redelivered and match them; those acknowledged after all are
    forgotten once their place is settled (console.jobs.automation.reading)."""
    entries = []
    for ref, messages in taken.items():
        place, job = kept[ref]
        entries.append(PlaceBatch(place, prepare_batch(place, messages, job), job, job.actor_name, job.reason))
    with transaction.atomic():
        results = store_many(entries)
        advance_many({entry.job: result.counted for entry, result in zip(entries, results, strict=True)
                      if entry.job is not None})
    reader.ack_all(taken)
    mark_acked([letter_id for result in results for letter_id in result.ids])
