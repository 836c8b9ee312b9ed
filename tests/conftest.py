"""Shared fixtures. Tests run against real PostgreSQL (DATABASE_URL, or the embedded one)."""

from __future__ import annotations

import pytest


@pytest.fixture
def operator(django_user_model):
    return django_user_model.objects.create_user("olga", password="triage-pass-123")


@pytest.fixture
def memory_broker():
    """A fresh in-memory broker named after the test, and its Broker row."""
    from console.brokers.memory.adapter import MemoryBroker
    from console.services.brokers import do_add_broker

    MemoryBroker.instances.pop("test", None)
    fake = MemoryBroker.named("test")
    broker = do_add_broker(actor="tests", name="mem", kind="memory", url="memory://test")
    yield fake, broker
    MemoryBroker.instances.pop("test", None)
