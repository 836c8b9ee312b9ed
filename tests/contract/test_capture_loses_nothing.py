"""Capture takes every letter into custody once: the place is emptied, nothing is lost, and a
capture that died after its commit and before its acknowledgement stores nothing twice when
it runs again."""

from __future__ import annotations

from console.models import DeadLetter
from console.services.custody import store_captured
from tests.contract.conftest import BODIES
from tests.flow import capture, letters_of


def test_capture_stores_every_letter_once_and_empties_the_place(harness, dead):
    job = capture(dead, harness.operator)
    assert (job.status, job.done, job.failed) == ("succeeded", len(BODIES), 0), job.error
    letters = letters_of(dead)
    assert sorted(letter.body_bytes for letter in letters) == sorted(BODIES)
    assert {letter.origin_queue for letter in letters} == {harness.origin}
    assert {letter.state for letter in letters} == {"held"}
    assert harness.dead_count() == 0

    assert capture(dead, harness.operator).done == 0
    assert len(letters_of(dead)) == len(BODIES)


def test_a_capture_interrupted_between_commit_and_ack_stores_nothing_twice(harness, broker, dead):
    with broker.adapter() as adapter:
        session = adapter.open_capture(dead.ref, prefetch=10)
        batch = session.next_batch(10, 2)
        assert sorted(m.body for m in batch) == sorted(BODIES)
        store_captured(dead, batch, job=None, actor="worker-that-died")
        session.close()  # no ack: the worker died here
    assert harness.dead_count() == len(BODIES), "unacknowledged letters stay on the broker"

    job = capture(dead, harness.operator)
    assert job.status == "succeeded", job.error
    letters = letters_of(dead)
    assert sorted(letter.body_bytes for letter in letters) == sorted(BODIES)
    assert DeadLetter.objects.filter(place=dead).count() == len(BODIES)
    assert harness.dead_count() == 0


def test_a_capture_with_a_limit_takes_that_many_and_leaves_the_rest(harness, dead, settings):
    settings.DLO_BATCH_SIZE = 1  # batches of one: the next is taken while the one before is stored
    job = capture(dead, harness.operator, limit=2)
    assert (job.status, job.done) == ("succeeded", 2), job.error
    assert len(letters_of(dead)) == 2 and harness.dead_count() == len(BODIES) - 2

    assert capture(dead, harness.operator).done == len(BODIES) - 2
    assert sorted(letter.body_bytes for letter in letters_of(dead)) == sorted(BODIES)
    assert harness.dead_count() == 0
