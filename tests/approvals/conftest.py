"""Fixtures of the two-person-rule tests: a requester, a second person, letters, no Celery."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.approvals


@pytest.fixture(autouse=True)
def queued_jobs(monkeypatch):
    """Job ids handed to Celery; none reaches a worker (the tests run them with run_job)."""
    from console.jobs import tasks

    queued: list[int] = []
    monkeypatch.setattr(tasks.run_job, "delay", queued.append)
    return queued


@pytest.fixture
def admin_user(django_user_model):
    """Ada, an admin (admins may purge)."""
    return django_user_model.objects.create_superuser("ada", password="approve-pass-123")


@pytest.fixture
def second_operator(django_user_model, operator):
    """Bob, holding the same role as olga."""
    bob = django_user_model.objects.create_user("bob", password="approve-pass-123")
    bob.groups.set(operator.groups.all())
    bob.user_permissions.set(operator.user_permissions.all())
    return bob


def api_as(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def letters(memory_broker):
    """Three held letters in orders.dlq, whose origin queue exists (so a replay can reach it)."""
    place = memory_place(memory_broker)
    return [store_letter(place, f'{{"order": {i}}}'.encode()) for i in range(3)]

