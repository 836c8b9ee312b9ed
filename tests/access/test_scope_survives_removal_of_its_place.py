"""Scopes fail closed: removing the place or broker a user was limited to leaves them limited,
to nothing there, instead of deleting their limits and with them every limit (issue 16,
finding 10)."""

from __future__ import annotations

import pytest

from console.access.roles import OPERATOR, set_role
from console.brokers.memory.adapter import MemoryBroker
from console.jobs.door.requests import request_job
from console.models import DeadLetter, RoleScope
from console.services.brokers import do_add_broker
from console.services.jobs import JobError
from tests.web.factory import memory_place

pytestmark = pytest.mark.django_db


def _sees_nothing(client, places_a_and_b) -> None:
    """What a user limited to nothing that exists any more reads: no broker, place, letter or
    audit event, and place A's page does not exist for them."""
    assert client.get("/api/brokers/").json() == []
    assert client.get("/api/places/").json() == []
    assert client.get("/api/letters/").json()["results"] == []
    assert client.get("/api/audit/").json()["results"] == []
    assert client.get(f"/places/{places_a_and_b.a.pk}/").status_code == 404
    assert client.get(f"/letters/{places_a_and_b.a_letter.pk}/").status_code == 404
    assert "orders.dlq" not in client.get("/").content.decode()


def test_a_user_limited_to_a_removed_place_sees_nothing_and_acts_on_nothing(places_a_and_b, people, signed_in_as):
    vera = people["viewer"]
    RoleScope.objects.create(user=vera, place=places_a_and_b.b)
    DeadLetter.objects.filter(place=places_a_and_b.b).delete()  # letters keep their place from going
    places_a_and_b.b.delete()
    assert RoleScope.objects.filter(user=vera).count() == 1  # the limit stays, emptied
    _sees_nothing(signed_in_as(vera), places_a_and_b)
    set_role(vera, OPERATOR)  # even one who may act, acts on nothing
    with pytest.raises(JobError, match="outside"):
        request_job("mark_failed", actor=vera, reason="not hers", ids=[places_a_and_b.a_letter.pk])


def test_a_user_limited_to_a_removed_broker_sees_nothing(places_a_and_b, people, signed_in_as):
    MemoryBroker.instances.pop("other", None)
    other = do_add_broker(actor="tests", name="other", kind="memory", url="memory://other")
    memory_place((MemoryBroker.named("other"), other), origin="elsewhere")
    otto = places_a_and_b.otto
    RoleScope.objects.filter(user=otto).delete()
    RoleScope.objects.create(user=otto, broker=other)
    other.delete()
    MemoryBroker.instances.pop("other", None)
    _sees_nothing(signed_in_as(otto), places_a_and_b)


def test_the_roles_page_and_command_say_the_limit_is_to_something_removed(places_a_and_b, people, signed_in_as):
    from io import StringIO

    from django.core.management import call_command

    otto = places_a_and_b.otto
    DeadLetter.objects.filter(place=places_a_and_b.a).delete()
    places_a_and_b.a.delete()
    page = signed_in_as(people["admin"]).get("/roles/").content.decode()
    assert "mem:orders.dlq (removed: allows nothing)" in page
    out = StringIO()
    call_command("roles", stdout=out)
    assert f"{otto.username}: operator  limited to mem:orders.dlq (removed: allows nothing)" in out.getvalue()
