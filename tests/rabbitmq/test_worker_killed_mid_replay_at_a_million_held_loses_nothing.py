"""A worker killed with SIGKILL during a 100,000-letter replay, on a console that holds a
million letters besides, loses nothing (issue 32): each kill leaves the batches it had taken
in flight (console.models.LetterFlight), the job resumes from its cursor in a fresh worker and
publishes them again under the same replay ids, and every letter ends ``replayed`` and on its
origin queue. The only duplicates are those republished copies, two batches at most per kill;
the million other letters are left as they were."""

from __future__ import annotations

from functools import partial

import pytest

from console.jobs.door.requests import request_job
from console.models import DeadLetter, DeadPlace, Job, LetterFlight, LetterState
from console.services.brokers import do_discover
from console.services.custody import REPLAY_ID_HEADER
from tests.held_letters import hold
from tests.rabbitmq.crash import BATCH_SIZE, assert_replayed, dead_queue

pytestmark = [pytest.mark.slow, pytest.mark.rabbitmq, pytest.mark.django_db(transaction=True)]

HELD = 1_000_000
LETTERS = 100_000
KILLS = 4
#: Seconds after a claim a kill may come: a replay of this size runs for tens of seconds.
MAX_DELAY = 6.0


def test_a_100000_letter_replay_beside_a_million_held_survives_kills(kit, rabbit_broker, operator, killer):
    work, dlq = dead_queue(kit)
    (place,) = [p for p in do_discover(rabbit_broker, actor=operator) if p.name == dlq]
    elsewhere = DeadPlace.objects.create(broker=rabbit_broker, name=kit.name("elsewhere.dlq"))
    hold(elsewhere, HELD, origin=kit.name("elsewhere"), prefix="other-", bare=True)
    hold(place, LETTERS, origin=work)

    job = request_job("replay", actor=operator, reason="crash test: replay beside a million",
                      filter={"place": place.pk})
    landed = killer.kill_during(job, KILLS, max_delay=MAX_DELAY)
    job = killer.finish(job)
    explain = partial(killer.explain, job)
    assert landed >= 1, explain("no kill landed while the replay ran")
    assert job.status == Job.Status.SUCCEEDED, explain("the replay did not succeed")
    assert job.done == LETTERS, explain(f"the job counts {job.done} replayed, not {LETTERS}")

    arrived = kit.take_all(work, REPLAY_ID_HEADER)
    allowed = 2 * BATCH_SIZE * killer.landed
    duplicates = assert_replayed(place, arrived, allowed_duplicates=allowed, explain=explain)
    assert not LetterFlight.objects.exists(), explain("letters are left in flight")
    others = DeadLetter.objects.filter(place=elsewhere)
    assert others.filter(state=LetterState.HELD, replay_id="").count() == HELD, explain("another place changed")
    print(f"seed {killer.seed}, {LETTERS} letters beside {HELD} held, {killer.landed} kills, {duplicates} "
          f"duplicates (at most {allowed})\n" + "\n".join(killer.kills))
