"""Fixtures of the security tests: letters in a place; jobs never reach a Celery worker."""

from __future__ import annotations

import pytest

from tests.web.factory import memory_place


@pytest.fixture(autouse=True)
def queued_jobs(monkeypatch):
    from console.jobs import tasks

    queued: list[int] = []
    monkeypatch.setattr(tasks.run_job, "delay", queued.append)
    return queued


@pytest.fixture
def place(memory_broker):
    return memory_place(memory_broker)
