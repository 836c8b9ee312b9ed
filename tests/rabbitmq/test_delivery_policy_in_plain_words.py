"""Issue 17, point 8 on the real RabbitMQ: what the broker tells of an origin queue's delivery
policy, in plain words: a quorum queue's ``x-delivery-limit`` (argument or policy) and where its
dead letters go, a "retry through a TTL queue" chain, a queue that drops what dies, and one that
is not there."""

from __future__ import annotations

import pytest

from console.brokers.base import PlaceRef
from console.letters.policy import describe

pytestmark = pytest.mark.rabbitmq


def words(adapter, queue: str) -> str:
    return describe(adapter.delivery_policy(PlaceRef(queue, "/")))


def test_a_quorum_queue_with_a_delivery_limit_argument(kit, adapter):
    dlq = kit.queue(kit.name("orders") + ".dlq", durable=True)
    orders = kit.queue(kit.name("orders"), {"x-delivery-limit": 20, "x-dead-letter-exchange": "",
                                            "x-dead-letter-routing-key": dlq}, quorum=True)
    assert words(adapter, orders) == f"at most 20 deliveries, then {dlq}"


def test_a_delivery_limit_and_dead_letter_route_set_by_a_policy(kit, adapter):
    dlx = kit.exchange(kit.name("payments-dlx"), "fanout")
    dlq = kit.queue(kit.name("payments") + ".dlq")
    kit.bind(dlq, dlx)
    payments = kit.queue(kit.name("payments"), quorum=True)
    kit.policies_on({payments: {"delivery-limit": 5, "dead-letter-exchange": dlx}})
    expected = f"at most 5 deliveries, then {dlq}"
    assert kit.eventually(lambda: words(adapter, payments), expected) == expected


def test_a_ttl_and_dead_letter_retry_chain(kit, adapter):
    work = kit.name("mailer")
    retry = kit.queue(f"{work}.retry", {"x-message-ttl": 60_000, "x-dead-letter-exchange": "",
                                        "x-dead-letter-routing-key": work})
    kit.queue(work, {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": retry})
    assert words(adapter, work) == (f"no delivery limit; a rejected letter waits 1 min in {retry} and comes back "
                                    "to the origin; the consumer decides how many rounds")


def test_a_queue_without_dead_lettering_drops_and_a_missing_queue_is_said_so(kit, adapter):
    classic = kit.queue(kit.name("audit"))
    assert words(adapter, classic) == "no delivery limit; a letter that dies is dropped (no dead-letter place is set)"
    assert words(adapter, kit.name("never-declared")) == (
        f"not told by the broker; no queue {kit.name('never-declared')} on vhost /")
