"""Purge erases a letter's body and keeps its tombstone (envelope, audit); mark failed gives a
letter up for good. Neither publishes anything to the broker."""

from __future__ import annotations

import pytest

from console.models import AuditEvent, DeadLetter
from tests.flow import capture, letters_of, mark_failed, purge


@pytest.mark.role("admin")  # purging is the admin's (console.access.roles)
def test_purge_keeps_a_tombstone_and_mark_failed_gives_up(harness, dead):
    capture(dead, harness.operator)
    gone, given_up, kept = letters_of(dead)

    job = purge(harness.operator, [gone.id])
    assert (job.status, job.done) == ("succeeded", 1), job.log
    tombstone = DeadLetter.objects.get(pk=gone.pk)
    assert tombstone.state == "purged" and tombstone.body_erased
    assert tombstone.body_bytes == b""
    assert (tombstone.origin_queue, tombstone.body_size) == (gone.origin_queue, gone.body_size)
    assert AuditEvent.objects.filter(action="purge", letter_ids__contains=[gone.id]).exists()

    job = mark_failed(harness.operator, [given_up.id])
    assert (job.status, job.done) == ("succeeded", 1), job.log
    failed = DeadLetter.objects.get(pk=given_up.pk)
    assert failed.state == "failed" and failed.body_bytes == given_up.body_bytes

    assert DeadLetter.objects.get(pk=kept.pk).state == "held"
    assert harness.origin_receives() == [], "purge and mark failed publish nothing"
