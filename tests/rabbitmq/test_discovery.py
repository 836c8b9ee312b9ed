"""Discovery of dead places on the real broker: by dead-letter argument, by policy, through the
DLX's bindings, by name convention; retry queues left out; arguments beat policies."""

from __future__ import annotations

import pytest

from console.brokers.rabbitmq.discovery import Topology, find_dead_places, topic_matches

pytestmark = pytest.mark.rabbitmq


def mine(kit, adapter):
    return {place.name: place for place in adapter.discover() if kit.suffix in place.name}


def to_queue(name: str) -> dict:
    return {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": name}


def test_by_argument_with_depth_and_consumers(kit, adapter):
    sink = kit.queue(kit.name("arg-sink"))
    source = kit.queue(kit.name("arg-source"), to_queue(sink))
    kit.publish(sink, b"one")
    kit.publish(sink, b"two")

    place = mine(kit, adapter)[sink]
    assert (place.discovered_by, place.origins, place.scope) == ("argument", [source], "/")
    assert (place.depth, place.consumers) == (2, 0)
    assert place.details["fed_by"][source]["set_by"] == "argument"
    assert kit.depth(sink) == 2  # discovery touched nothing


def test_by_policy_and_arguments_win_over_policy(kit, adapter):
    policy_sink = kit.queue(kit.name("policy-sink"))
    argument_sink = kit.queue(kit.name("argument-sink"))
    by_policy = kit.queue(kit.name("by-policy"))
    both = kit.queue(kit.name("both"), to_queue(argument_sink))
    definition = {"dead-letter-exchange": "", "dead-letter-routing-key": policy_sink}
    kit.policies_on({by_policy: definition, both: definition})

    def told():
        places = mine(kit, adapter)
        return [(places[sink].discovered_by, places[sink].origins) if sink in places else None
                for sink in (policy_sink, argument_sink)]

    expected = [("policy", [by_policy]), ("argument", [both])]
    assert kit.eventually(told, expected) == expected


def test_through_the_dead_letter_exchange_bindings(kit, adapter):
    events = kit.exchange(kit.name("events"), "topic")
    # direct DLX with a dead-letter routing key
    direct = kit.exchange(kit.name("dlx-direct"), "direct")
    direct_hit, direct_miss = kit.queue(kit.name("direct-hit")), kit.queue(kit.name("direct-miss"))
    kit.bind(direct_hit, direct, "failed")
    kit.bind(direct_miss, direct, "other")
    kit.queue(kit.name("direct-source"), {"x-dead-letter-exchange": direct, "x-dead-letter-routing-key": "failed"})
    # topic DLX without one: the source's own binding keys are routed
    topic = kit.exchange(kit.name("dlx-topic"), "topic")
    star, hash_, miss = (kit.queue(kit.name(n)) for n in ("topic-star", "topic-hash", "topic-miss"))
    kit.bind(star, topic, "orders.*.eu")
    kit.bind(hash_, topic, "orders.#")
    kit.bind(miss, topic, "invoices.*")
    topic_source = kit.queue(kit.name("topic-source"), {"x-dead-letter-exchange": topic})
    kit.bind(topic_source, events, "orders.created.eu")
    # fanout and headers DLX: every bound queue
    fanout = kit.exchange(kit.name("dlx-fanout"), "fanout")
    fanned = kit.queue(kit.name("fanned"))
    kit.bind(fanned, fanout)
    kit.queue(kit.name("fanout-source"), {"x-dead-letter-exchange": fanout})
    headers = kit.exchange(kit.name("dlx-headers"), "headers")
    by_headers = kit.queue(kit.name("by-headers"))
    kit.bind(by_headers, headers)
    kit.queue(kit.name("headers-source"), {"x-dead-letter-exchange": headers})

    places = mine(kit, adapter)
    found = {name for name, place in places.items() if place.discovered_by == "binding"}
    assert found == {direct_hit, star, hash_, fanned, by_headers}
    assert places[star].origins == [topic_source]
    assert {direct_miss, miss}.isdisjoint(places)


def test_by_name_convention_with_the_origin_it_names(kit, adapter):
    orders = kit.queue(kit.name("orders"))
    suffixes = (".dlq", ".DLQ", "-dead-letter", ".dead-letter", ".error", "_error")
    names = [kit.queue(orders + suffix) for suffix in suffixes]
    names.append(kit.queue("dlq." + orders))
    names.append(kit.queue("DLQ." + kit.name("lonely")))
    kit.queue(kit.name("orders-dlq-not"))  # no convention

    places = mine(kit, adapter)
    assert set(places) == set(names)
    assert {place.discovered_by for place in places.values()} == {"convention"}
    assert places[orders + ".dlq"].origins == [orders]
    assert places["DLQ." + kit.name("lonely")].origins == []


def test_retry_queues_of_a_ttl_retry_loop_are_not_dead_places(kit, adapter):
    work = kit.name("mails")
    retry = kit.queue(work + ".retry", {"x-message-ttl": 1000, **to_queue(work)})
    kit.queue(work, to_queue(retry))
    parking = kit.queue(work + ".dlq")

    assert set(mine(kit, adapter)) == {parking}


def test_oldest_message_time_and_exchange_to_exchange_routes_from_the_api():
    """The parts the local broker cannot show on demand (the API's head timestamp is sampled)."""
    queues = [
        {"vhost": "/", "name": "src", "arguments": {"x-dead-letter-exchange": "dlx", "x-dead-letter-routing-key": "k"}},
        {"vhost": "/", "name": "sink", "arguments": {}, "messages": 3, "head_message_timestamp": 1767323045},
    ]
    exchanges = [{"vhost": "/", "name": "dlx", "type": "direct"}, {"vhost": "/", "name": "inner", "type": "fanout"}]
    bindings = [
        {"vhost": "/", "source": "dlx", "destination": "inner", "destination_type": "exchange", "routing_key": "k"},
        {"vhost": "/", "source": "inner", "destination": "sink", "destination_type": "queue", "routing_key": ""},
    ]
    (place,) = find_dead_places(Topology.from_api(queues, exchanges, bindings))
    assert (place.name, place.origins, place.depth) == ("sink", ["src"], 3)
    assert place.oldest_at.timestamp() == 1767323045


@pytest.mark.parametrize("pattern, key, matches", [
    ("orders.*", "orders.created", True),
    ("orders.*", "orders.created.eu", False),
    ("orders.#", "orders", True),
    ("orders.#", "orders.created.eu", True),
    ("#.eu", "orders.created.eu", True),
    ("*.created", "created", False),
    ("#", "", True),
    ("a.#.z", "a.z", True),
])
def test_topic_binding_matching(pattern, key, matches):
    assert topic_matches(pattern, key) is matches
