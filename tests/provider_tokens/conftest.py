"""Fixtures of the provider-token tests: two places with a letter each, and an API client that
sends a bearer token. The provider is the real one of tests/identity_provider.py."""

from __future__ import annotations

from collections.abc import Callable
from types import SimpleNamespace

import pytest
from rest_framework.test import APIClient

from tests.web.factory import memory_place, store_letter


@pytest.fixture
def places(memory_broker) -> SimpleNamespace:
    """``orders.dlq`` and ``billing.dlq`` on the broker "mem", one letter each."""
    orders, billing = memory_place(memory_broker, origin="orders"), memory_place(memory_broker, origin="billing")
    return SimpleNamespace(
        orders=orders, billing=billing,
        orders_letter=store_letter(orders, b'{"order": 7}', origin="orders"),
        billing_letter=store_letter(billing, b'{"ledger": 991}', origin="billing"),
    )


@pytest.fixture
def bearer() -> Callable[[str], APIClient]:
    """``bearer(token)``: an API client that sends ``Authorization: Bearer <token>``."""

    def client(token: str) -> APIClient:
        api = APIClient()
        api.credentials(HTTP_AUTHORIZATION=f"Bearer {token}")
        return api

    return client
