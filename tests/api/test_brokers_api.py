"""Adding and listing brokers: secrets go in, never come out; discovery reports places or a
clear broker error."""

from __future__ import annotations

import pytest

from console.models import AuditEvent, Broker
from tests.api.helpers import dead_message

# Brokers and purges are the admin's (console.access.roles).
pytestmark = [pytest.mark.django_db, pytest.mark.role("admin")]

SECRET = "s3cr3t-Pa55word"


def test_the_password_is_stored_but_never_returned(api):
    created = api.post("/api/brokers/", {
        "name": "orders-rabbit", "kind": "memory", "url": "memory://orders",
        "username": "ops", "password": SECRET, "options": {"prefetch": 10},
    }, format="json")
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["has_password"] is True and "password" not in body
    assert body["capabilities"] == {"peek": True, "server_side_move": False, "move": True}
    assert body["reachable"] is None and body["last_error"] == ""
    assert Broker.objects.get(name="orders-rabbit").password == SECRET

    for response in (created, api.get("/api/brokers/"), api.get(f"/api/brokers/{body['id']}/")):
        assert response.status_code in (200, 201)
        assert SECRET not in response.content.decode()
    assert SECRET not in str(AuditEvent.objects.get(action="broker.add").content())


def test_credentials_in_urls_are_taken_out_and_kept_secret(api):
    created = api.post("/api/brokers/", {
        "name": "rabbit", "kind": "rabbitmq", "url": f"amqp://guest:{SECRET}@rabbit.internal:5672/%2F",
        "management_url": f"http://guest:{SECRET}@rabbit.internal:15672",
    }, format="json")
    assert created.status_code == 201, created.content
    body = created.json()
    assert body["url"] == "amqp://rabbit.internal:5672/%2F"
    assert body["management_url"] == "http://rabbit.internal:15672"
    assert body["username"] == "guest" and body["has_password"] is True
    listed = api.get("/api/brokers/").content.decode()
    assert SECRET not in listed and SECRET not in created.content.decode()
    assert Broker.objects.get(name="rabbit").password == SECRET


@pytest.mark.parametrize("payload, complaint", [
    ({"name": "x", "kind": "carrier-pigeon", "url": "memory://x"}, "kind"),
    ({"name": "has spaces", "kind": "memory", "url": "memory://x"}, "name"),
    ({"name": "x", "kind": "memory", "url": "not a url"}, "detail"),
])
def test_a_bad_broker_definition_is_refused(api, payload, complaint):
    response = api.post("/api/brokers/", payload, format="json")
    assert response.status_code == 400
    assert complaint in response.json()
    assert not Broker.objects.exists()


def test_discover_returns_the_dead_places_with_their_depth(api, memory_broker):
    fake, broker = memory_broker
    fake.queue("orders.dlq").extend([dead_message("a"), dead_message("b")])
    fake.queue("invoices")
    response = api.post(f"/api/brokers/{broker.pk}/discover/")
    assert response.status_code == 200
    (place,) = response.json()
    assert (place["name"], place["depth"], place["origins"], place["held"]) == ("orders.dlq", 2, ["orders"], 0)
    detail = api.get(f"/api/brokers/{broker.pk}/").json()
    assert detail["reachable"] is True and detail["last_discovery_at"]
    assert AuditEvent.objects.filter(action="broker.discover", actor_name="olga").exists()


def test_discover_on_an_unreachable_broker_answers_502_with_the_reason(api, memory_broker):
    fake, broker = memory_broker
    fake.down = True
    response = api.post(f"/api/brokers/{broker.pk}/discover/")
    assert response.status_code == 502
    assert response.json() == {"detail": "memory broker is down (memory://test)", "permanent": False}
    detail = api.get(f"/api/brokers/{broker.pk}/").json()
    assert detail["reachable"] is False and detail["last_error"] == "memory broker is down (memory://test)"


def test_discover_with_wrong_credentials_says_retrying_will_not_help(api, memory_broker):
    fake, broker = memory_broker
    fake.password = "the-right-one"
    response = api.post(f"/api/brokers/{broker.pk}/discover/")
    assert response.status_code == 502
    assert response.json() == {"detail": "access refused: wrong credentials for memory://test", "permanent": True}
