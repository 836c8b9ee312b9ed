"""The kept-place crash scenario (tests.keeper_crash) on RabbitMQ with 200 kept DLQs: ten
SIGKILLs of the keeper and a restart of the broker, and every letter is kept once.

The broker is a private node (tests.rabbitmq.private_node), never the shared one; the DLQs
are made in bulk (tests.rabbitmq.many_places)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from console.models import DeadPlace
from console.services.brokers import do_add_broker
from tests.keeper_crash import survives_kills_and_a_restart
from tests.rabbitmq.many_places import ManyPlaces

pytestmark = [pytest.mark.keeper, pytest.mark.slow, pytest.mark.rabbitmq, pytest.mark.django_db(transaction=True)]

PLACES = 200
#: Letters that die into each place before each kill: 1,000 a round, 10,000 in all.
PER_PLACE = 5


class RabbitSite:
    can_restart = True

    def __init__(self, node, kit) -> None:
        self.node = node
        self.kit = kit

    def make_places(self, count: int) -> list[DeadPlace]:
        broker = do_add_broker(actor="tests", name=f"kept-{self.kit.suffix}", kind="rabbitmq", url=self.node.url)
        self.many = ManyPlaces(self.kit, count)
        return self.many.places(broker)

    def let_die(self, first: int, count: int) -> None:
        self.many.let_die(first, count)

    def restart_broker(self) -> None:
        self.node.stop()
        self.node.start()
        self.kit.reconnect()

    def depths(self, places: Sequence[DeadPlace]) -> int:
        return sum(self.many.depths([place.name for place in places]).values())

    def after_kill(self) -> None:
        # Its reader process exits as its pipe closes; what they held goes back to the queues.
        self.many.wait_unconsumed()


def test_every_letter_of_two_hundred_places_is_kept_once_through_kills_and_a_broker_restart(
        private_rabbit, private_kit, keeper, operator):
    survives_kills_and_a_restart(RabbitSite(private_rabbit, private_kit), keeper, operator, places=PLACES,
                                 per_place=PER_PLACE)
