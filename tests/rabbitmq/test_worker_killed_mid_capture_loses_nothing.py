"""A worker killed with SIGKILL again and again in the middle of a capture loses no letter and
stores none twice: after each kill the job is resumed by the periodic task, from a fresh worker,
and messages stored but not yet acknowledged come back redelivered and match their stored copy."""

from __future__ import annotations

from collections import Counter
from functools import partial

import pytest

from console.jobs.door.requests import request_job
from console.models import AuditEvent, DeadLetter, Job
from console.services.brokers import do_discover
from tests.rabbitmq.crash import KILLS, dead_letter_numbered, dead_queue, message_id, numbered

pytestmark = [pytest.mark.slow, pytest.mark.rabbitmq, pytest.mark.django_db(transaction=True)]

#: Letters per round; a round whose job ends before all the kills landed adds as many again.
LETTERS = 5000


def test_every_message_ends_in_custody_once(kit, rabbit_broker, operator, killer):
    work, dlq = dead_queue(kit)
    sent = 0
    jobs = []
    while killer.landed < KILLS:
        dead_letter_numbered(kit, work, dlq, sent, LETTERS)
        sent += LETTERS
        (place,) = [p for p in do_discover(rabbit_broker, actor=operator) if p.name == dlq]
        job = request_job("capture", place=place, actor=operator, reason="crash test: capture")
        killer.kill_during(job, KILLS - killer.landed)
        jobs.append(killer.finish(job))

    print(f"seed {killer.seed}, {sent} letters\n" + "\n".join(killer.kills))
    for job in jobs:
        assert job.status == Job.Status.SUCCEEDED, killer.explain(job, "the capture did not succeed")
    explain = partial(killer.explain, jobs[-1])
    letters = DeadLetter.objects.filter(place=place)
    stored = Counter(letters.values_list("message_id", flat=True))
    twice = sorted(mid for mid, count in stored.items() if count > 1)
    assert not twice, explain(f"{len(twice)} messages stored more than once, e.g. {twice[:5]}")
    missing = sorted({message_id(n) for n in range(sent)} - set(stored))
    assert not missing, explain(f"{len(missing)} messages lost, e.g. {missing[:5]}")
    assert len(stored) == sent
    # A batch stored but not acked when its worker died comes again; it is matched, not counted twice.
    assert sum(job.done for job in jobs) == sent, explain("the jobs' counts do not add up to the letters stored")
    assert kit.depth(dlq) == 0, explain("messages left on the dead letter queue")
    assert not letters.filter(pending_ack__isnull=False).exists(), explain("letters stored but never acknowledged")
    expected = {props["message_id"]: body for body, props in numbered(0, sent)}
    changed = [mid for mid, body in letters.values_list("message_id", "body") if bytes(body) != expected[mid]]
    assert not changed, explain(f"bodies changed in custody: {changed[:5]}")
    audited = Counter(i for ids in AuditEvent.objects.filter(action="capture").values_list("letter_ids", flat=True)
                      for i in ids)
    assert set(audited) == set(letters.values_list("id", flat=True)), explain("a stored letter has no audit row")
    assert max(audited.values()) == 1, explain("a letter was audited as stored twice")
