"""A worker killed with SIGKILL again and again in the middle of a replay loses no letter: after
each kill the job is resumed by the periodic task, from a fresh worker, and publishes again the
batch it had not recorded yet, under the same replay ids. Every letter ends ``replayed`` and on
its origin queue; the only duplicates are those republished copies, carrying their letter's
replay id, a couple of batches at most per kill."""

from __future__ import annotations

from functools import partial

import pytest

from console.jobs.door.requests import request_job
from console.models import Job
from console.services.brokers import do_discover
from tests.rabbitmq.crash import BATCH_SIZE, KILLS, arrivals, assert_replayed, dead_letter_numbered, dead_queue

pytestmark = [pytest.mark.slow, pytest.mark.rabbitmq, pytest.mark.django_db(transaction=True)]

#: Letters per round; a round whose job ends before all the kills landed adds as many again.
LETTERS = 5000


def test_every_letter_reaches_its_origin_with_its_replay_id(kit, rabbit_broker, operator, killer):
    work, dlq = dead_queue(kit)
    arrived = []  # (message id, replay id header) of every message the origin queue received
    sent = 0
    jobs = []
    while killer.landed < KILLS:
        dead_letter_numbered(kit, work, dlq, sent, LETTERS)
        sent += LETTERS
        (place,) = [p for p in do_discover(rabbit_broker, actor=operator) if p.name == dlq]
        capture = killer.finish(request_job("capture", place=place, actor=operator, reason="crash test: take them in"))
        assert capture.status == Job.Status.SUCCEEDED, killer.explain(capture, "the capture failed")
        job = request_job("replay", actor=operator, reason="crash test: replay", filter={"place": place.pk})
        killer.kill_during(job, KILLS - killer.landed)
        jobs.append(killer.finish(job))
        arrived += arrivals(kit, work)  # before the next round dead-letters new messages through it

    for job in jobs:
        assert job.status == Job.Status.SUCCEEDED, killer.explain(job, "the replay did not succeed")
    # The replay loop may hold one batch confirmed but unrecorded while the next is in flight.
    allowed = 2 * BATCH_SIZE * killer.landed
    duplicates = assert_replayed(place, arrived, allowed_duplicates=allowed,
                                 explain=partial(killer.explain, jobs[-1]))
    assert sum(job.done for job in jobs) == sent, killer.explain(jobs[-1], "the jobs' counts are off")
    print(f"seed {killer.seed}, {sent} letters, {killer.landed} kills, {duplicates} duplicates (at most {allowed})\n"
          + "\n".join(killer.kills))
