"""What the keeper's readers may hold is bounded (issue 35), however many places it keeps: with
DLO_KEEPER_CONNECTIONS 2 and DLO_KEEPER_HELD 600, a keeper over 60 kept DLQs that already hold
50 letters each reads them over two connections (its places shared between them), and the
broker sends each place's consumer no more than its share of 600 ahead (30 places a reader: 20
each, which the management API shows as the consumers' prefetch), instead of the 100 a place
gets by itself; every letter reaches custody once, and the DLQs end empty."""

from __future__ import annotations

import time
from collections import Counter

import pytest

from console.models import DeadLetter
from tests.flow import keep
from tests.keeper_crash import body_of
from tests.rabbitmq.many_places import ManyPlaces

pytestmark = [pytest.mark.keeper, pytest.mark.rabbitmq, pytest.mark.django_db(transaction=True)]

PLACES = 60
PER_PLACE = 50


def test_readers_share_their_bound_among_places_and_connections(kit, rabbit_broker, operator, keeper):
    many = ManyPlaces(kit, PLACES, "bounded")
    try:
        places = [keep(place, operator) for place in many.places(rabbit_broker)]
        many.let_die(0, PLACES * PER_PLACE)
        keeper.env.update(DLO_KEEPER_CONNECTIONS="2", DLO_KEEPER_HELD="600", DLO_KEEPER_PREFETCH="100")
        keeper.start()
        ours = set(many.dlqs)
        connections: set[str] = set()
        prefetches: Counter[int] = Counter()
        deadline = time.monotonic() + 300  # 3,000 letters on a machine busy with other tests
        # The consumers, as the management API lists them, until every letter is in custody and
        # the API has named both connections (it lists a consumer before its channel's details
        # on a busy machine: seen in CI, every consumer of a run without them).
        while (DeadLetter.objects.filter(place__in=places).count() < PLACES * PER_PLACE or len(prefetches) == 0
               or len(connections) < 2):
            assert time.monotonic() < deadline, (f"connections seen {connections}, letters in custody "
                                                 f"{DeadLetter.objects.filter(place__in=places).count()}; "
                                                 f"keeper log:\n{keeper.log(4000)}")
            for consumer in kit.http.get("/api/consumers", timeout=30).json():
                if (consumer.get("queue") or {}).get("name") in ours:
                    if name := (consumer.get("channel_details") or {}).get("connection_name"):
                        connections.add(name)
                    prefetches[consumer.get("prefetch_count")] += 1
            time.sleep(0.2)
        assert len(connections) == 2, connections
        assert set(prefetches) == {600 // (PLACES // 2)}, prefetches
        stored = Counter(DeadLetter.objects.filter(place__in=places).values_list("body", flat=True))
        assert set(stored) == {body_of(n) for n in range(PLACES * PER_PLACE)}
        assert max(stored.values()) == 1
        kit.wait_for(lambda: not any(many.depths().values()), "the DLQs to be empty")
    finally:
        keeper.stop()
        many.delete()
