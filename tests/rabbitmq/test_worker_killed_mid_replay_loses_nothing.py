"""A worker killed with SIGKILL again and again in the middle of a replay loses no letter: after
each kill the job is resumed by the periodic task, from a fresh worker, and publishes again the
batch it had not recorded yet, under the same replay ids. Every letter ends ``replayed`` and on
its origin queue; the only duplicates are those republished copies, carrying their letter's
replay id, a couple of batches at most per kill."""

from __future__ import annotations

from collections import Counter

import pytest

from console.models import AuditEvent, DeadLetter, Job, LetterState
from console.services.brokers import do_discover
from console.services.custody import REPLAY_ID_HEADER
from console.services.jobs import do_capture, do_replay
from tests.rabbitmq.crash import BATCH_SIZE, KILLS, dead_queue, kill_letters

pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db(transaction=True)]

#: Letters per round; a round whose job ends before all the kills landed adds as many again.
LETTERS = 5000


def test_every_letter_reaches_its_origin_with_its_replay_id(kit, rabbit_broker, operator, killer):
    work, dlq = dead_queue(kit)
    arrived = []  # (message id, replay id header) of every message the origin queue received
    sent = 0
    jobs = []
    while killer.landed < KILLS:
        kill_letters(kit, work, dlq, sent, LETTERS)
        sent += LETTERS
        (place,) = [p for p in do_discover(rabbit_broker, actor=operator) if p.name == dlq]
        capture = killer.finish(do_capture(place, actor=operator, reason="crash test: take them in"))
        assert capture.status == Job.Status.SUCCEEDED, killer.explain(capture, "the capture failed")
        job = do_replay(actor=operator, reason="crash test: replay", filter={"place": place.pk})
        killer.kill_during(job, KILLS - killer.landed)
        jobs.append(killer.finish(job))
        arrived += [(m.message_id, m.headers.get(REPLAY_ID_HEADER)) for m in kit.drain(work)]

    kills = killer.landed
    letters = DeadLetter.objects.filter(place=place)
    replay_ids = dict(letters.values_list("message_id", "replay_id"))
    copies = Counter(mid for mid, _ in arrived)
    duplicates = len(arrived) - len(copies)
    print(f"seed {killer.seed}, {sent} letters, {kills} kills, {duplicates} duplicates "
          f"(bound {2 * BATCH_SIZE * kills})\n" + "\n".join(killer.kills))
    for job in jobs:
        assert job.status == Job.Status.SUCCEEDED, killer.explain(job, "the replay did not succeed")
    explain = lambda problem: killer.explain(jobs[-1], problem)  # noqa: E731
    assert len(replay_ids) == sent
    not_replayed = letters.exclude(state=LetterState.REPLAYED).count()
    assert not_replayed == 0, explain(f"{not_replayed} letters are not replayed")
    assert "" not in replay_ids.values() and len(set(replay_ids.values())) == sent, explain("replay ids not unique")
    lost = sorted(set(replay_ids) - set(copies))
    assert not lost, explain(f"{len(lost)} letters never reached their origin queue, e.g. {lost[:5]}")
    strangers = sorted(set(copies) - set(replay_ids))
    assert not strangers, explain(f"messages on the origin queue that are no letter: {strangers[:5]}")
    wrong = [(mid, rid) for mid, rid in arrived if rid != replay_ids[mid]]
    assert not wrong, explain(f"{len(wrong)} copies carry another replay id than their letter's: {wrong[:3]}")
    assert duplicates <= 2 * BATCH_SIZE * kills, explain(f"{duplicates} duplicates for {kills} kills")
    audited = Counter(i for ids in AuditEvent.objects.filter(action="replay", outcome="confirmed")
                      .values_list("letter_ids", flat=True) for i in ids)
    assert set(audited) == set(letters.values_list("id", flat=True)), explain("a replayed letter has no audit row")
    assert max(audited.values()) == 1, explain("a letter was audited as replayed twice")
