"""An origin queue's delivery policy, from the management API's topology (pure functions).

What RabbitMQ tells: the delivery limit of a quorum queue (``x-delivery-limit`` argument, or
``delivery-limit`` in its effective policy; the argument wins; classic queues ignore it, and
RabbitMQ 4 gives quorum queues 20 when none is set), where its dead letters go (its dead-letter
exchange and routing key, routed through the topology), and the delay queues of a "retry
through a TTL queue" chain: queues with a message TTL whose expired messages dead-letter back
into the origin. How many rounds such a chain runs is the consumer's decision, not the
broker's, and the words say so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from console.brokers.rabbitmq.discovery import Key, Topology, dead_letter_targets, has_own_ttl
from console.letters.policy import DeliveryPolicy, RetryStep

#: The delivery limit RabbitMQ 4.0 and later give a quorum queue that sets none.
DEFAULT_QUORUM_LIMIT_FROM_4 = 20


def _setting(queue: Mapping[str, Any], argument: str, policy_key: str) -> Any:
    arguments = queue.get("arguments") or {}
    if argument in arguments:
        return arguments[argument]
    policy = queue.get("effective_policy_definition") or {}
    return policy.get(policy_key) if isinstance(policy, Mapping) else None


def _major(version: str) -> int:
    head = version.split(".", 1)[0]
    return int(head) if head.isdigit() else 0


def origin_policy(topology: Topology, key: Key, version: str = "") -> DeliveryPolicy:
    """The delivery policy of the queue ``key`` (vhost, name) as the broker tells it."""
    queue = topology.queues.get(key)
    if queue is None:
        return DeliveryPolicy(told=False, notes=(f"no queue {key[1]} on vhost {key[0]}",))
    notes: list[str] = []
    quorum = queue.get("type") == "quorum"
    limit = _setting(queue, "x-delivery-limit", "delivery-limit") if quorum else None  # only quorum queues have one
    if quorum and limit is None and _major(version) >= 4:
        limit = DEFAULT_QUORUM_LIMIT_FROM_4
    setting, targets = dead_letter_targets(topology, key)
    chain = _retry_chain(topology, key)
    dead = sorted(targets - {step.via for step in chain})
    if setting is not None and not targets:
        if setting.exchange == "" and setting.routing_key is None:
            notes.append("dead letters go through the default exchange with their own routing keys")
        else:
            notes.append(f"its dead-letter exchange {setting.exchange or '(default)'} routes them to no queue")
    return DeliveryPolicy(
        told=True, max_deliveries=int(limit) if limit is not None else None, dead_place=" and ".join(dead),
        dead_places=tuple((name, key[0]) for name in dead),
        retry_chain=chain, notes=tuple(notes) if not chain else (*notes, "the consumer decides how many rounds"),
    )


def _retry_chain(topology: Topology, key: Key) -> tuple[RetryStep, ...]:
    """Delay queues of the origin's vhost whose expired messages come back to it, shortest first."""
    vhost, name = key
    steps = []
    for other, queue in topology.queues.items():
        if other[0] != vhost or other == key or not has_own_ttl(queue):
            continue
        _, back = dead_letter_targets(topology, other)
        if name in back:
            ttl = _setting(queue, "x-message-ttl", "message-ttl")
            steps.append(RetryStep(via=other[1], wait_seconds=float(ttl) / 1000 if ttl is not None else None))
    return tuple(sorted(steps, key=lambda step: (step.wait_seconds is None, step.wait_seconds or 0, step.via)))
