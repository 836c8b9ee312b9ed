"""Issue 28, finding 4, on the real RabbitMQ: one origin dead-letters (through a fanout exchange)
into place A and place B. Its effective policy, on GET /api/origins/ and on the Origins page,
is built from what the reader may see: to an operator limited to A it names A's dead place but
not B's, and only the rules he may see (the one over A), not the rule over every place nor the
one over B, which answer 404 to him. The unlimited admin reads it whole."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from console.services.brokers import do_discover
from console.services.policy import UNSEEN_PLACES
from console.services.rules import do_create_rule
from tests.access.conftest import shows_nothing_of_b
from tests.rabbitmq.conftest import kit, rabbit_broker  # noqa: F401 - fixtures
from tests.web.factory import store_letter

pytestmark = [pytest.mark.django_db, pytest.mark.rabbitmq]


def _as(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_the_policy_of_an_origin_dying_into_a_and_b_read_by_a_user_limited_to_a(
        kit, rabbit_broker, people, client):  # noqa: F811 - fixtures
    from console.models import RoleScope

    dlx = kit.exchange(kit.name("orders-dlx"), "fanout")
    a_name, b_name = kit.queue(kit.name("orders") + ".dlq"), kit.queue(kit.name("billing") + ".dlq")
    kit.bind(a_name, dlx)
    kit.bind(b_name, dlx)
    origin = kit.queue(kit.name("orders"), {"x-dead-letter-exchange": dlx})
    places = {place.name: place for place in do_discover(rabbit_broker, actor="tests")}
    a, b = places[a_name], places[b_name]
    store_letter(a, b'{"order": 7}', origin=origin, exception_type="Timeout")
    store_letter(b, b'{"order": 7}', origin=origin, exception_type="Timeout")
    ada = people["admin"]
    hidden = do_create_rule(actor=ada, name="everywhere-rule", enabled=True, action={"kind": "hold"})
    b_only = do_create_rule(actor=ada, name="b-only", enabled=True, action={"kind": "hold"}, scope={"place": b.pk})
    do_create_rule(actor=ada, name="a-rule", enabled=True, action={"kind": "mark_failed"}, scope={"place": a.pk})
    otto = people["operator"]
    RoleScope.objects.create(user=otto, place=a)

    (whole,) = [o for o in _as(ada).get("/api/origins/", {"broker": rabbit_broker.pk}).json() if o["name"] == origin]
    assert whole["policy"] == (f"no delivery limit, a rejected letter goes to {b_name} and {a_name}; "
                               "then rule 'everywhere-rule' holds for a person; then rule 'b-only' holds for a person; "
                               "then rule 'a-rule' marks failed")

    answer = _as(otto).get("/api/origins/")
    (seen,) = answer.json()
    assert seen["policy"] == (f"no delivery limit, a rejected letter goes to {a_name} and {UNSEEN_PLACES}; "
                              "then rule 'a-rule' marks failed")
    for text in (answer.content.decode(), _page(client, otto)):
        shows_nothing_of_b(text)
        assert "everywhere-rule" not in text and "b-only" not in text and b_name not in text
    for rule in (hidden, b_only):
        assert _as(otto).get(f"/api/rules/{rule.pk}/").status_code == 404


def _page(client, user) -> str:
    client.force_login(user)
    page = client.get("/origins/")
    assert page.status_code == 200
    return page.content.decode()
