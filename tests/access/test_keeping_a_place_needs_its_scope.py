"""Who may keep a place in custody through the API: a viewer may not; an operator limited to
place A keeps A but not B (404, as if B did not exist), nor sets the broker's default for new
places (only someone who may act on the whole broker does). Each switch is audited once."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from console.models import AuditEvent, Broker, DeadPlace

pytestmark = pytest.mark.django_db


def _as(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_only_those_who_may_act_on_a_place_keep_it(places_a_and_b, people):
    a, b, otto = places_a_and_b.a, places_a_and_b.b, places_a_and_b.otto
    assert _as(people["viewer"]).patch(f"/api/places/{a.pk}/", {"keep_in_custody": True},
                                       format="json").status_code == 403
    assert _as(otto).patch(f"/api/places/{b.pk}/", {"keep_in_custody": True}, format="json").status_code == 404
    kept = _as(otto).patch(f"/api/places/{a.pk}/", {"keep_in_custody": True, "reason": "mine"}, format="json")
    assert kept.status_code == 200 and kept.json()["keep_in_custody"] is True
    again = _as(otto).patch(f"/api/places/{a.pk}/", {"keep_in_custody": True}, format="json")
    assert again.status_code == 200  # already kept: nothing changes, nothing more is audited
    assert [(e.actor_name, e.place_name, e.outcome) for e in AuditEvent.objects.filter(action="place.keep")] == [
        ("otto", a.name, "on")]
    assert not DeadPlace.objects.get(pk=b.pk).keep_in_custody

    refused = _as(otto).patch(f"/api/brokers/{a.broker_id}/", {"keep_new_places": True}, format="json")
    assert refused.status_code in (400, 404)
    assert not Broker.objects.get(pk=a.broker_id).keep_new_places
    assert _as(people["operator"]).patch(f"/api/places/{a.pk}/", {"keep_in_custody": "perhaps"},
                                         format="json").status_code == 400
