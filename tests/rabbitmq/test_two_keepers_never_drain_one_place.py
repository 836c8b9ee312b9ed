"""Two keeper processes over the same kept places: each place is held by one of them only
(its advisory lock), never consumed by two at once, and every letter is stored once; when one
keeper is killed, the other takes its places up within seconds."""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest

from console.jobs.automation.keeper import LOCK_CLASS
from console.models import DeadLetter
from console.services.brokers import do_discover
from tests.flow import keep
from tests.rabbitmq.crash import dead_letter_numbered
from tests.workers import Keeper

pytestmark = [pytest.mark.keeper, pytest.mark.rabbitmq, pytest.mark.django_db(transaction=True)]

PLACES = 6
PER_PLACE = 300


def _holders() -> dict[int, list[int]]:
    """Place id -> the backends holding its keeper lock in this database (keepers on other
    databases of the server, a benchmark's, hold locks of the same numbers)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT objid, pid FROM pg_locks WHERE locktype = 'advisory' AND classid = %s AND granted "
                       "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
                       [LOCK_CLASS])
        holders: dict[int, list[int]] = {}
        for objid, pid in cursor.fetchall():
            holders.setdefault(int(objid), []).append(pid)
    return holders


def test_two_keepers_share_places_and_never_consume_one_together(kit, rabbit_broker, operator, keeper,
                                                                  filesystem_transport, tmp_path):
    queues = []
    for n in range(PLACES):
        dlq = kit.queue(kit.name(f"shared{n}") + ".dlq")
        work = kit.queue(kit.name(f"shared{n}"), {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})
        queues.append((work, dlq))
    found = {place.name: place for place in do_discover(rabbit_broker, actor=operator)}
    places = [keep(found[dlq], operator) for _, dlq in queues]
    other = Keeper(filesystem_transport, tmp_path / "other-keeper.log")
    consumers = Counter()
    watching = threading.Event()

    def watch() -> None:  # what a person would see on the management page, sampled
        while not watching.is_set():
            for _, dlq in queues:
                consumers[dlq] = max(consumers[dlq], kit.consumers(dlq))
            time.sleep(0.01)

    watcher = threading.Thread(target=watch)
    try:
        keeper.start()
        other.start()
        watcher.start()
        sent = 0
        for work, dlq in queues:
            dead_letter_numbered(kit, work, dlq, sent, PER_PLACE, kept=True)
            sent += PER_PLACE
        kit.wait_for(lambda: DeadLetter.objects.count() == sent, "every letter in custody", seconds=60)
        holders = _holders()
        assert sorted(holders) == sorted(p.pk for p in places)
        assert all(len(pids) == 1 for pids in holders.values()), holders

        keeper.kill()
        for work, dlq in queues:
            dead_letter_numbered(kit, work, dlq, sent, PER_PLACE, kept=True)
            sent += PER_PLACE
        kit.wait_for(lambda: DeadLetter.objects.count() == sent, "the other keeper to take every place up",
                     seconds=60)
        assert len({pid for pids in _holders().values() for pid in pids}) == 1  # the survivor holds them all
    finally:
        watching.set()
        if watcher.is_alive():
            watcher.join()
        other.stop()
        other.kill()
    assert max(consumers.values()) <= 1, f"a place was consumed by two readers at once: {dict(consumers)}"
    assert max(Counter(DeadLetter.objects.values_list("message_id", flat=True)).values()) == 1
