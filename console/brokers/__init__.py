"""Broker adapters: pure Python, no Django.

One package per broker kind under ``console/brokers/<kind>/``; the registry maps a kind to
its adapter class by dotted path and imports it on first use, so no SDK is imported at start-up.
"""

from console.brokers.base import (
    Adapter,
    BrokerConfig,
    BrokerError,
    CaptureSession,
    Outgoing,
    PlaceInfo,
    PlaceRef,
    PublishResult,
    Received,
    ServerMove,
)
from console.brokers.registry import KINDS, adapter_class, get_adapter

__all__ = [
    "Adapter",
    "BrokerConfig",
    "BrokerError",
    "CaptureSession",
    "KINDS",
    "Outgoing",
    "PlaceInfo",
    "PlaceRef",
    "PublishResult",
    "Received",
    "ServerMove",
    "adapter_class",
    "get_adapter",
]
