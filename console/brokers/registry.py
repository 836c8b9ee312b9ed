"""Kind -> adapter class, imported lazily by dotted path."""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from console.brokers.base import Adapter, BrokerConfig

KINDS: dict[str, str] = {
    "activemq": "console.brokers.activemq.adapter.ActiveMQAdapter",
    "memory": "console.brokers.memory.adapter.MemoryAdapter",
    "rabbitmq": "console.brokers.rabbitmq.adapter.RabbitMQAdapter",
    "nats": "console.brokers.nats.adapter.NatsAdapter",
    "redis": "console.brokers.redis.adapter.RedisStreamsAdapter",
}


def adapter_class(kind: str) -> type[Adapter]:
    try:
        dotted = KINDS[kind]
    except KeyError:
        raise ValueError(f"unknown broker kind {kind!r}; known: {', '.join(sorted(KINDS))}") from None
    module_name, _, class_name = dotted.rpartition(".")
    adapter: type[Adapter] = getattr(import_module(module_name), class_name)
    return adapter


def get_adapter(config: BrokerConfig) -> Adapter:
    return adapter_class(config.kind)(config)
