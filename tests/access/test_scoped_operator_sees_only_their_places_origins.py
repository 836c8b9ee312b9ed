"""A user limited to place A sees the origins of A's letters only: the origins page and API list
"orders" and nothing of B's origin "billing"; B's origin answers 404 to closing its breaker."""

from __future__ import annotations

import pytest

from console.models import Origin
from tests.access.conftest import shows_nothing_of_b

pytestmark = pytest.mark.django_db


def test_origins_page_and_api_show_only_the_origins_of_the_users_places(places_a_and_b, people, signed_in_as):
    admin = signed_in_as(people["admin"])
    assert sorted(o["name"] for o in admin.get("/api/origins/").json()) == ["billing", "orders"]
    otto = signed_in_as(places_a_and_b.otto)
    listed = otto.get("/api/origins/")
    assert [o["name"] for o in listed.json()] == ["orders"]
    shows_nothing_of_b(listed.content.decode())
    page = otto.get("/origins/").content.decode()
    assert "orders" in page
    shows_nothing_of_b(page)
    billing = Origin.objects.get(name="billing")
    Origin.objects.filter(pk=billing.pk).update(breaker_opened_at="2026-11-23T09:00:00Z", breaker_reason="open")
    assert otto.post(f"/api/origins/{billing.pk}/close-breaker/", {"reason": "x"},
                     content_type="application/json").status_code == 404
    assert otto.post(f"/origins/{billing.pk}/close-breaker/", {"reason": "x"}).status_code == 404
    assert Origin.objects.get(pk=billing.pk).breaker_open
