"""Fixtures of the page tests: a signed-in client, a place with letters, no Celery."""

from __future__ import annotations

import pytest

from tests.web.factory import memory_place


@pytest.fixture(autouse=True)
def queued_jobs(monkeypatch):
    """Job ids the services queued for Celery; nothing is sent to a worker from these tests."""
    from console.jobs import tasks

    queued: list[int] = []
    monkeypatch.setattr(tasks.run_job, "delay", queued.append)
    return queued


@pytest.fixture
def place(memory_broker):
    return memory_place(memory_broker)
