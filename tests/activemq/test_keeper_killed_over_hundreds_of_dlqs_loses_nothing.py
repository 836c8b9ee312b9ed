"""The kept-place crash scenario (tests.keeper_crash) on ActiveMQ Classic with 200 kept
individual DLQs: ten SIGKILLs of the keeper and a restart of the broker, and every message
NACKed into them is kept once and gone from the broker.

The broker is one of the test's own (tests.activemq.private_broker), never the shared one;
the DLQs are named to the console as configured places (the ``dead_places`` option), as a
site with individual DLQs does."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

import pytest

from console.models import DeadPlace
from console.services.brokers import do_add_broker, do_discover
from tests.activemq.kit import Client
from tests.activemq.private_broker import PrivateActiveMQ
from tests.keeper_crash import body_of, place_of, survives_kills_and_a_restart

pytestmark = [pytest.mark.keeper, pytest.mark.slow, pytest.mark.activemq, pytest.mark.django_db(transaction=True)]

PLACES = 200
#: Messages NACKed into each DLQ before each kill: 400 a round, 4,000 in all.
PER_PLACE = 2


@pytest.fixture
def private_activemq(tmp_path):
    broker = PrivateActiveMQ(tmp_path / "activemq")
    broker.start()
    yield broker
    broker.close()


class ActiveMQSite:
    can_restart = True

    def __init__(self, broker: PrivateActiveMQ) -> None:
        self.broker = broker
        self.suffix = uuid.uuid4().hex[:8]
        self.client = Client(broker.url, self.suffix)
        self.queues: list[str] = []

    def make_places(self, count: int) -> list[DeadPlace]:
        self.queues = [f"indiv.orders{n:04d}.{self.suffix}" for n in range(count)]
        dlqs = [f"DLQ.{queue}" for queue in self.queues]
        broker = do_add_broker(actor="tests", name="activemq-private", kind="activemq", url=self.broker.url,
                               options={"dead_places": dlqs})
        found = {place.name: place for place in do_discover(broker, actor="tests")}
        return [found[dlq] for dlq in dlqs]

    def let_die(self, first: int, count: int) -> None:
        """Sent persistent, then NACKed by a consumer of each queue: ActiveMQ dead-letters each."""
        sent = [0] * len(self.queues)
        for n in range(first, first + count):
            place = place_of(n, len(self.queues))
            self.client.send(self.queues[place], body_of(n))
            sent[place] += 1
        self.client.fail_many({queue: many for queue, many in zip(self.queues, sent, strict=True) if many})

    def restart_broker(self) -> None:
        self.client.close()
        self.broker.stop()
        self.broker.start()
        self.client = Client(self.broker.url, self.suffix)

    def depths(self, places: Sequence[DeadPlace]) -> int:
        """Messages a browser of each DLQ sees."""
        return sum(len(self.client.browse(place.name)) for place in places)

    def after_kill(self) -> None:
        """Nothing to wait for: the killed keeper's unacknowledged messages go back as its
        connection closes."""

    def close(self) -> None:
        self.client.close()


def test_every_message_of_two_hundred_dlqs_is_kept_once_through_kills_and_a_broker_restart(
        private_activemq, keeper, operator):
    site = ActiveMQSite(private_activemq)
    try:
        survives_kills_and_a_restart(site, keeper, operator, places=PLACES, per_place=PER_PLACE)
    finally:
        site.close()
