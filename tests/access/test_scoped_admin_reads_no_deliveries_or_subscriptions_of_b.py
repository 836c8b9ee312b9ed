"""Issue 28, finding 6: an admin limited to place A reads, on GET /api/notifications/deliveries/
and /api/notifications/subscriptions/ and on the Notifications page, only the subscriptions and
deliveries about A: nothing about B, and nothing about every place or no place in particular
(which may be about B: a job over both, a broker down). The unlimited admin reads them all."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from console.access.roles import ADMIN, set_role
from console.models import Delivery, RoleScope, Subscription
from console.services.channels import do_add_channel, do_subscribe
from tests.access.conftest import shows_nothing_of_b
from tests.web.factory import store_letter

pytestmark = pytest.mark.django_db


def _as(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_a_scoped_admin_reads_only_the_subscriptions_and_deliveries_of_their_places(
        places_a_and_b, people, django_user_model, client):
    ada = people["admin"]
    channel = do_add_channel(actor=ada, name="ops", kind="webhook", target="http://127.0.0.1:9/hook")
    everyone = do_subscribe(actor=ada, channel=channel, events=["group.new"], user=ada)
    on_a = do_subscribe(actor=ada, channel=channel, events=["group.new"], user=ada, place=places_a_and_b.a)
    on_b = do_subscribe(actor=ada, channel=channel, events=["group.new"], user=ada, place=places_a_and_b.b)
    store_letter(places_a_and_b.a, b'{"n": 1}', origin="orders", exception_type="OrderTimeout")
    store_letter(places_a_and_b.b, b'{"n": 2}', origin="billing", exception_type="LedgerMismatchError")
    about_a = Delivery.objects.get(place=places_a_and_b.a)
    assert Delivery.objects.filter(place=places_a_and_b.b).exists()

    adam = django_user_model.objects.create_user("adam")
    set_role(adam, ADMIN)
    RoleScope.objects.create(user=adam, place=places_a_and_b.a)
    api = _as(adam)
    subscriptions = api.get("/api/notifications/subscriptions/")
    assert [s["id"] for s in subscriptions.json()] == [on_a.pk]
    deliveries = api.get("/api/notifications/deliveries/")
    assert [d["id"] for d in deliveries.json()] == [about_a.pk]
    client.force_login(adam)
    page = client.get("/notifications/")
    assert page.status_code == 200
    for text in (subscriptions.content.decode(), deliveries.content.decode(), page.content.decode()):
        shows_nothing_of_b(text)

    assert {s["id"] for s in _as(ada).get("/api/notifications/subscriptions/").json()} == {
        everyone.pk, on_a.pk, on_b.pk} == set(Subscription.objects.values_list("pk", flat=True))
    assert len(_as(ada).get("/api/notifications/deliveries/").json()) == Delivery.objects.count() == 2
