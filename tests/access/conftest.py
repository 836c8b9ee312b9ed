"""Fixtures of the access tests: one user per role, and one of every object a URL can name."""

from __future__ import annotations

import pytest

from console.access.roles import ADMIN, OPERATOR, VIEWER, set_role

ROLES = (VIEWER, OPERATOR, ADMIN)


@pytest.fixture(autouse=True)
def queued_jobs(monkeypatch):
    """Job ids the services queued for Celery; nothing reaches a worker from these tests."""
    from console.jobs import tasks

    queued: list[int] = []
    monkeypatch.setattr(tasks.run_job, "delay", queued.append)
    return queued


@pytest.fixture
def people(django_user_model) -> dict[str, object]:
    """role name -> a user holding just that role (vera the viewer, otto the operator, ada the admin)."""
    users = {}
    for role, name in ((VIEWER, "vera"), (OPERATOR, "otto"), (ADMIN, "ada")):
        users[role] = django_user_model.objects.create_user(name, password=f"{name}-pass-123")
        set_role(users[role], role)
    return users


@pytest.fixture
def signed_in_as(client):
    """``signed_in_as(user)``: the test client with that user's session (None: signed out)."""

    def sign(user):
        client.logout()
        if user is not None:
            client.force_login(user)
        return client

    return sign
