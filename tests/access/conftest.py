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


#: What place B's letters, events, jobs and groups carry: none of it may reach a user limited to A.
B_SECRETS = ("billing", "LedgerMismatchError", "ledger 991 out of balance", "card-4111-in-the-diff")


@pytest.fixture
def places_a_and_b(memory_broker, people):
    """Two dead places on the broker "mem": A (``orders.dlq``) and B (``billing.dlq``), with one
    letter each, and otto the operator limited to A (RoleScope). B's letter fails with an
    exception whose type and message, like B's name and origin, are in ``B_SECRETS``."""
    from types import SimpleNamespace

    from console.models import RoleScope
    from tests.web.factory import memory_place, store_letter

    a, b = memory_place(memory_broker, origin="orders"), memory_place(memory_broker, origin="billing")
    a_letter = store_letter(a, b'{"order": 7}', origin="orders", exception_type="OrderTimeout",
                            exception_message="order 7 timed out")
    b_letter = store_letter(b, b'{"ledger": 991}', origin="billing", exception_type="LedgerMismatchError",
                            exception_message="ledger 991 out of balance")
    RoleScope.objects.create(user=people["operator"], place=a)
    return SimpleNamespace(a=a, b=b, a_letter=a_letter, b_letter=b_letter, otto=people["operator"])


def shows_nothing_of_b(text: str) -> None:
    """Assert that an answer names nothing of place B."""
    found = [secret for secret in B_SECRETS if secret.lower() in text.lower()]
    assert not found, f"place B shows through: {found}"
