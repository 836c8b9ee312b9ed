"""The keeper (``manage.py keep``) killed with SIGKILL at random moments, ten times, while two
places are kept and letters keep dying into them, and the broker restarted meanwhile: in the
end every message is in custody exactly once, audited once, nothing is left unacknowledged and
nothing on the broker. A killed keeper's places are taken up by the next one (its advisory
locks went with its connection); messages committed but not acknowledged come back
redelivered and match their copies.

The broker is a private node (tests.rabbitmq.private_node), never the shared one."""

from __future__ import annotations

import os
import random
import time
from collections import Counter

import pytest

from console.models import AuditEvent, DeadLetter, DeadPlace, Job
from console.services.brokers import do_add_broker
from tests.flow import keep
from tests.rabbitmq.crash import BATCH_SIZE, dead_letter_numbered, message_id

pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db(transaction=True)]

KILLS = 10
#: Letters that die into each place before each kill.
PER_ROUND = 1000
#: The kill comes this many seconds after the keeper started, drawn at random: before its
#: first look (it boots in about a second), in the middle of a drain, or once it is idle.
DELAYS = (0.5, 3.0)


def test_every_letter_is_kept_once_through_kills_and_a_broker_restart(private_rabbit, private_kit, keeper, operator):
    kit = private_kit
    seed = int(os.environ.get("DLO_CRASH_SEED") or random.randrange(2**32))
    chance = random.Random(seed)
    broker = do_add_broker(actor="tests", name=f"kept-{kit.suffix}", kind="rabbitmq", url=private_rabbit.url)
    queues, places = [], []
    for n in range(2):
        dlq = kit.queue(kit.name(f"kept{n}") + ".dlq", durable=True)
        work = kit.queue(kit.name(f"kept{n}"), {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq},
                         durable=True)
        queues.append((work, dlq))
        # Declared by hand: discovery needs the management API, which the private node has not.
        places.append(keep(DeadPlace.objects.create(broker=broker, name=dlq, kind="queue", origins=[work]), operator))
    keeper.env.update(DLO_BATCH_SIZE=str(BATCH_SIZE))
    history, sent = [], 0

    def explain(problem: str) -> str:
        jobs = "\n".join(f"  job {j.pk} {j.status} done={j.done} error={j.error!r}"
                         for j in Job.objects.filter(kind="keep"))
        return f"{problem} (seed {seed}; DLO_CRASH_SEED reproduces it)\n" + "\n".join(history) + f"\n{jobs}\n" \
               f"keeper log:\n{keeper.log(6000)}"

    for kill in range(1, KILLS + 1):
        for work, dlq in queues:
            dead_letter_numbered(kit, work, dlq, sent, PER_ROUND)
            sent += PER_ROUND
        keeper.start()
        if kill == KILLS // 2:  # the broker goes away under a running keeper and comes back
            time.sleep(1.5)
            private_rabbit.stop()
            time.sleep(2)
            private_rabbit.start()
            kit.reconnect()
            history.append(f"broker restarted with {DeadLetter.objects.count()} of {sent} letters in custody")
        delay = chance.uniform(*DELAYS)
        time.sleep(delay)
        keeper.kill()
        # Its reader process exits as its pipe closes; what they held goes back to the queues.
        kit.wait_for(lambda: not any(kit.consumers(dlq) for _, dlq in queues), "the killed keeper's readers to go")
        history.append(f"kill {kill}: {delay:.2f}s after the start, {DeadLetter.objects.count()} of {sent} in custody")

    keeper.start()
    deadline = time.monotonic() + 120
    while DeadLetter.objects.count() < sent or any(kit.depth(dlq) for _, dlq in queues):
        assert time.monotonic() < deadline, explain("the letters never all reached custody")
        time.sleep(0.2)
    keeper.stop()

    print("\n".join(history))
    stored = Counter(DeadLetter.objects.values_list("message_id", flat=True))
    twice = sorted(mid for mid, count in stored.items() if count > 1)
    assert not twice, explain(f"{len(twice)} messages stored more than once, e.g. {twice[:5]}")
    missing = sorted({message_id(n) for n in range(sent)} - set(stored))
    assert not missing, explain(f"{len(missing)} messages lost, e.g. {missing[:5]}")
    assert not DeadLetter.objects.filter(pending_ack__isnull=False).exists(), explain("letters never acknowledged")
    assert [kit.depth(dlq) for _, dlq in queues] == [0, 0], explain("messages left on the broker")
    audited = Counter(i for ids in AuditEvent.objects.filter(action="capture").values_list("letter_ids", flat=True)
                      for i in ids)
    assert set(audited) == set(DeadLetter.objects.values_list("id", flat=True)), explain("a letter has no audit row")
    assert max(audited.values()) == 1, explain("a letter was audited as stored twice")
    jobs = Job.objects.filter(kind="keep")
    assert jobs.count() == 2, explain("a place got more than one keep job")
    assert sum(jobs.values_list("done", flat=True)) == sent, explain("the keep jobs' counts do not add up")
