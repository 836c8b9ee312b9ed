"""Broker kind -> its adapter class (console.kinds: by dotted path, imported on first use)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from console.kinds import Kinds

if TYPE_CHECKING:
    from console.brokers.base import Adapter, BrokerConfig

KINDS: Kinds[type[Adapter]] = Kinds("broker kind", {
    "activemq": "console.brokers.activemq.adapter.ActiveMQAdapter",
    "memory": "console.brokers.memory.adapter.MemoryAdapter",
    "rabbitmq": "console.brokers.rabbitmq.adapter.RabbitMQAdapter",
    "nats": "console.brokers.nats.adapter.NatsAdapter",
    "redis": "console.brokers.redis.adapter.RedisStreamsAdapter",
}, unknown=lambda name, known: ValueError(f"unknown broker kind {name!r}; known: {', '.join(sorted(known))}"))


def kind_names() -> list[str]:
    """Every broker kind's name (the API's BrokerKindEnum)."""
    return sorted(KINDS)


def adapter_class(kind: str) -> type[Adapter]:
    return KINDS.get(kind)


def get_adapter(config: BrokerConfig) -> Adapter:
    return adapter_class(config.kind)(config)
