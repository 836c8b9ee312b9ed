"""The plain words of an origin's policy apart from any broker: the rules' phrases appended to the
broker's (the seam console.rules will fill), durations, and RabbitMQ 4's default quorum limit,
which these machines' RabbitMQ 3.10 cannot show."""

from __future__ import annotations

from console.brokers.rabbitmq.discovery import Topology
from console.brokers.rabbitmq.policy import origin_policy
from console.letters.policy import DeliveryPolicy, describe, duration
from console.services.policy import with_rules


def test_rules_phrases_follow_the_brokers_words():
    broker = describe(DeliveryPolicy(told=True, max_deliveries=20, dead_place="orders.dlq"))
    assert with_rules(broker, [("card declined", "retries 3 × 1 min"), ("poison", "marks it failed")]) == (
        "at most 20 deliveries, then orders.dlq; then rule 'card declined' retries 3 × 1 min; "
        "then rule 'poison' marks it failed")
    assert with_rules(broker, []) == broker


def test_durations_read_as_people_say_them():
    assert [duration(s) for s in (0.25, 1, 90, 60, 7200, None)] == [
        "250 ms", "1 s", "1.5 min", "1 min", "2 h", "an unknown time"]


def test_a_quorum_queue_without_a_limit_gets_twenty_from_rabbitmq_4():
    queue = {"vhost": "/", "name": "orders", "type": "quorum", "arguments": {}}
    topology = Topology.from_api([queue], [], [])
    assert describe(origin_policy(topology, ("/", "orders"), "4.0.5")).startswith("at most 20 deliveries")
    assert describe(origin_policy(topology, ("/", "orders"), "3.10.8")).startswith("no delivery limit")
