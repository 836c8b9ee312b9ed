"""Issue 28, finding 7: an admin limited to place A cannot subscribe anyone, on any channel, to
B's events: a subscription to every place or to B's place is refused with 403 and audited,
through the API and the page; one to A is made. A subscription such an admin made before (to
every place, for an unlimited user) hears only what its maker may see: its receiver, a real
HTTP server on loopback, hears of A's new group and never of B's."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from console.access.roles import ADMIN, set_role
from console.models import AuditEvent, Delivery, RoleScope, Subscription
from console.notifications.delivery import deliver
from tests.access.conftest import shows_nothing_of_b
from tests.web.factory import store_letter

pytestmark = pytest.mark.django_db


@pytest.fixture
def adam(places_a_and_b, django_user_model):
    """An admin limited to place A."""
    user = django_user_model.objects.create_user("adam")
    set_role(user, ADMIN)
    RoleScope.objects.create(user=user, place=places_a_and_b.a)
    return user


def _as(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_a_scoped_admin_subscribes_people_to_their_own_places_only(places_a_and_b, people, adam, http, client):
    api = _as(adam)
    made = api.post("/api/notifications/channels/", {"name": "adam's", "kind": "webhook", "target": http.url},
                    format="json")
    assert made.status_code == 201, made.content
    channel = made.json()["id"]
    wanted = {"channel": channel, "events": ["group.new", "letter.quarantined"], "user": "ada"}
    for place in (None, places_a_and_b.b.pk):
        refused = api.post("/api/notifications/subscriptions/", {**wanted, "place": place}, format="json")
        assert refused.status_code == 403, refused.content
        shows_nothing_of_b(refused.content.decode())
    client.force_login(adam)
    client.post("/notifications/", {"subscription-channel": channel, "subscription-user": "ada",
                                     "subscription-events": ["group.new"]})
    assert not Subscription.objects.exists()
    assert AuditEvent.objects.filter(action="subscription.refused", outcome="refused").count() == 3
    assert api.post("/api/notifications/subscriptions/", {**wanted, "place": places_a_and_b.a.pk},
                    format="json").status_code == 201


def test_a_subscription_made_by_a_scoped_admin_hears_nothing_beyond_their_scope(places_a_and_b, people, adam, http):
    from console.models import Channel

    channel = Channel.objects.create(name="adam's", kind="webhook", target=http.url, created_by="adam")
    # As the console let a scoped admin subscribe an unlimited user to every place before.
    Subscription.objects.create(channel=channel, user=people["admin"], events=["group.new"], created_by="adam")
    store_letter(places_a_and_b.b, b'{"ledger": 992}', origin="billing", exception_type="BillingCrash")
    store_letter(places_a_and_b.a, b'{"order": 8}', origin="orders", exception_type="OrderLost")
    for pk in Delivery.objects.filter(status="pending").values_list("pk", flat=True):
        deliver(pk)
    (told,) = http.json()
    assert told["event"] == "group.new" and "OrderLost" in told["subject"]
    shows_nothing_of_b(http.requests[0]["body"].decode())
