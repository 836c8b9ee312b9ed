"""Capture, replay, mark failed and purge through the services and job runner, on the
in-memory adapter: the pure logic, with real PostgreSQL underneath."""

from __future__ import annotations

import pytest

from console.brokers.memory.adapter import Message
from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import AuditEvent, DeadLetter, DeadPlace, Job
from console.services.audit import verify_chain
from console.services.brokers import do_discover
from console.services.jobs import JobError

pytestmark = pytest.mark.django_db


def _dead(fake, count, origin="orders"):
    fake.queue(origin)
    for i in range(count):
        fake.queue(f"{origin}.dlq").append(
            Message(f"order {i}".encode(), {"x-origin-queue": origin, "x-reason": "rejected"}, {"message_id": f"m{i}"})
        )


def _capture(broker, operator, **kw):
    (place,) = do_discover(broker, actor=operator)
    job = request_job("capture", place=place, actor=operator, reason="triage", **kw)
    assert run_job(job.pk) == "succeeded"
    return place, Job.objects.get(pk=job.pk)


def test_capture_takes_every_message_once_and_empties_the_place(memory_broker, operator):
    fake, broker = memory_broker
    _dead(fake, 7)
    place, job = _capture(broker, operator)
    assert job.done == 7
    assert list(DeadLetter.objects.order_by("id").values_list("body", flat=True)) == [
        f"order {i}".encode() for i in range(7)
    ]
    assert len(fake.queue("orders.dlq")) == 0
    assert DeadPlace.objects.get(pk=place.pk).depth == 0


def test_redelivered_message_committed_but_not_acked_is_not_stored_twice(memory_broker, operator, settings):
    fake, broker = memory_broker
    settings.DLO_BATCH_SIZE = 2
    _dead(fake, 3)
    (place,) = do_discover(broker, actor=operator)
    # A capture that stored a batch and died before acking it.
    from console.services.custody import store_captured

    adapter = broker.adapter()
    session = adapter.open_capture(place.ref, prefetch=2)
    store_captured(place, session.next_batch(2, 0), job=None, actor="crashed-worker")
    session.close()  # the broker hands the unacked messages back, flagged redelivered
    assert DeadLetter.objects.count() == 2

    job = request_job("capture", place=place, actor=operator, reason="again")
    run_job(job.pk)
    assert DeadLetter.objects.count() == 3
    assert not DeadLetter.objects.filter(pending_ack__isnull=False).exists()


def test_replay_reaches_origin_once_with_replay_id_and_is_audited(memory_broker, operator):
    fake, broker = memory_broker
    _dead(fake, 3)
    _capture(broker, operator)
    ids = list(DeadLetter.objects.values_list("id", flat=True))
    job = request_job("replay", actor=operator, reason="fixed the bug", ids=ids[:2])
    assert run_job(job.pk) == "succeeded"
    delivered = list(fake.queue("orders"))
    assert [m.body for m in delivered] == [b"order 0", b"order 1"]
    replay_ids = {m.headers["x-dlo-replay-id"] for m in delivered}
    assert replay_ids == set(DeadLetter.objects.filter(id__in=ids[:2]).values_list("replay_id", flat=True))
    assert set(DeadLetter.objects.values_list("state", flat=True)) == {"replayed", "held"}
    event = AuditEvent.objects.get(action="replay")
    assert event.letter_ids == ids[:2] and event.actor_name == "olga" and event.reason == "fixed the bug"
    assert verify_chain().ok


def test_a_replayed_letter_that_dies_again_comes_back_linked_to_its_parent(memory_broker, operator):
    fake, broker = memory_broker
    _dead(fake, 1)
    _capture(broker, operator)
    first = DeadLetter.objects.get()
    job = request_job("replay", actor=operator, reason="retry", ids=[first.id])
    run_job(job.pk)
    # The consumer fails again: the message dies into the DLQ with our header on it.
    again = fake.queue("orders").popleft()
    fake.queue("orders.dlq").append(again)
    _capture(broker, operator)
    returned = DeadLetter.objects.exclude(pk=first.pk).get()
    assert returned.parent_id == first.id
    assert Job.objects.get(pk=job.pk).returned == 1


def test_replay_to_a_missing_origin_leaves_letter_held_and_counts_it_failed(memory_broker, operator):
    fake, broker = memory_broker
    _dead(fake, 1)
    _capture(broker, operator)
    del fake.queues["orders"]
    job = request_job("replay", actor=operator, reason="retry", filter={"origin": "orders"})
    run_job(job.pk)
    job.refresh_from_db()
    assert (job.done, job.failed, job.status) == (0, 1, "failed")  # none done: failed, not succeeded
    assert DeadLetter.objects.get().state == "held"
    assert AuditEvent.objects.filter(action="replay", outcome="failed").exists()


@pytest.mark.role("admin")  # purging is the admin's (console.access.roles)
def test_mark_failed_then_purge_erases_body_and_keeps_tombstone(memory_broker, operator):
    fake, broker = memory_broker
    _dead(fake, 2)
    _capture(broker, operator)
    ids = list(DeadLetter.objects.values_list("id", flat=True))
    run_job(request_job("mark_failed", actor=operator, reason="won't fix", ids=[ids[0]]).pk)
    run_job(request_job("purge", actor=operator, reason="cleanup", ids=ids).pk)
    letters = DeadLetter.objects.order_by("id")
    assert [letter.state for letter in letters] == ["purged", "purged"]
    assert all(letter.body_bytes == b"" and letter.body_erased for letter in letters)
    assert AuditEvent.objects.filter(action="purge").get().letter_ids == ids


def test_select_all_matching_acts_only_on_the_letters_seen_at_preview(memory_broker, operator):
    fake, broker = memory_broker
    _dead(fake, 2)
    _capture(broker, operator)
    job = request_job("mark_failed", actor=operator, reason="x", filter={"origin": "orders"})
    _dead(fake, 3)
    _capture(broker, operator)  # three more arrive after the preview
    run_job(job.pk)
    assert DeadLetter.objects.filter(state="failed").count() == 2
    assert DeadLetter.objects.filter(state="held").count() == 3


def test_a_job_needs_a_reason(memory_broker, operator):
    fake, broker = memory_broker
    _dead(fake, 1)
    _capture(broker, operator)
    with pytest.raises(JobError, match="reason"):
        request_job("replay", actor=operator, reason="  ", filter={})


def test_body_text_filter_matches_bytes_anywhere_in_the_body(memory_broker, operator):
    from console.services.selection import filter_letters

    fake, broker = memory_broker
    fake.queue("orders")
    for body in (b'{"sku": "A-1"}', b"\xff\xfe binary A-1", b"nothing here"):
        fake.queue("orders.dlq").append(Message(body, {"x-origin-queue": "orders"}))
    _capture(broker, operator)
    assert filter_letters({"q": "A-1"}).count() == 2
    assert filter_letters({"q": "é"}).count() == 0
