"""A user limited to one broker (RoleScope) sees and acts only there: lists, pages, API and
job creation."""

from __future__ import annotations

import pytest

from console.brokers.memory.adapter import MemoryBroker
from console.jobs.door.requests import request_job
from console.models import Job, RoleScope
from console.services.brokers import do_add_broker
from console.services.jobs import JobError
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_brokers(memory_broker):
    """(place and letter on broker "mem", place and letter on broker "other")."""
    MemoryBroker.instances.pop("other", None)
    other = (MemoryBroker.named("other"), do_add_broker(actor="tests", name="other", kind="memory",
                                                         url="memory://other"))
    mine, theirs = memory_place(memory_broker), memory_place(other, origin="billing")
    yield (mine, store_letter(mine, b"mine")), (theirs, store_letter(theirs, b"theirs"))
    MemoryBroker.instances.pop("other", None)


@pytest.fixture
def scoped(people, two_brokers):
    """otto the operator, limited to the broker "mem"."""
    (mine, _), _ = two_brokers
    RoleScope.objects.create(user=people["operator"], broker=mine.broker)
    return people["operator"]


def test_lists_show_only_the_scope(scoped, two_brokers, signed_in_as):
    (mine, my_letter), (theirs, their_letter) = two_brokers
    client = signed_in_as(scoped)
    assert [b["name"] for b in client.get("/api/brokers/").json()] == ["mem"]
    assert [p["id"] for p in client.get("/api/places/").json()] == [mine.pk]
    assert [row["id"] for row in client.get("/api/letters/").json()["results"]] == [my_letter.pk]
    inventory = client.get("/").content.decode()
    assert f'href="/places/{mine.pk}/"' in inventory and f'href="/places/{theirs.pk}/"' not in inventory


def test_objects_outside_the_scope_do_not_exist_for_the_user(scoped, two_brokers, signed_in_as):
    (mine, my_letter), (theirs, their_letter) = two_brokers
    client = signed_in_as(scoped)
    assert client.get(f"/letters/{my_letter.pk}/").status_code == 200
    assert client.get(f"/letters/{their_letter.pk}/").status_code == 404
    assert client.get(f"/places/{theirs.pk}/").status_code == 404
    assert client.get(f"/api/letters/{their_letter.pk}/").status_code == 404
    assert client.post(f"/places/{theirs.pk}/capture/", {"reason": "not mine"}).status_code == 404
    assert not Job.objects.exists()


def test_a_job_on_letters_outside_the_scope_is_refused(scoped, two_brokers, signed_in_as, people):
    (_, my_letter), (_, their_letter) = two_brokers
    refused = signed_in_as(scoped).post(
        "/api/jobs/", {"action": "replay", "letters": [my_letter.pk, their_letter.pk], "reason": "both"},
        content_type="application/json")
    assert refused.status_code == 400 and "outside what you may act on" in refused.json()["detail"]
    with pytest.raises(JobError, match="outside"):
        request_job("replay", actor=scoped, reason="by filter", filter={"state": "held"})
    assert request_job("replay", actor=scoped, reason="mine", ids=[my_letter.pk]).kind == "replay"
    # Without a scope the same operator may act on both.
    assert request_job("replay", actor=people["admin"], reason="both",
                          ids=[my_letter.pk, their_letter.pk]).total == 2


def test_a_user_limited_to_places_sees_just_them_and_their_broker_once(people, memory_broker, signed_in_as):
    orders, billing, other = (memory_place(memory_broker, origin=o) for o in ("orders", "billing", "refunds"))
    letters = {place.pk: store_letter(place, place.name.encode()).pk for place in (orders, billing, other)}
    vera = people["viewer"]
    RoleScope.objects.bulk_create([RoleScope(user=vera, place=orders), RoleScope(user=vera, place=billing)])
    client = signed_in_as(vera)
    assert [b["name"] for b in client.get("/api/brokers/").json()] == ["mem"]
    assert sorted(p["id"] for p in client.get("/api/places/").json()) == sorted([orders.pk, billing.pk])
    listed = {row["id"] for row in client.get("/api/letters/").json()["results"]}
    assert listed == {letters[orders.pk], letters[billing.pk]}
    assert client.get(f"/places/{other.pk}/").status_code == 404


def test_a_preview_of_letters_outside_the_scope_is_refused_and_tells_nothing_about_them(
        scoped, two_brokers, signed_in_as):
    (_, my_letter), (_, their_letter) = two_brokers
    client = signed_in_as(scoped)
    refused = client.post("/api/jobs/preview/", {"letters": [their_letter.pk]}, content_type="application/json")
    assert refused.status_code == 400 and "outside what you may act on" in refused.json()["detail"]
    assert set(refused.json()) == {"detail"} and "billing" not in refused.content.decode()
    by_filter = client.post("/api/jobs/preview/", {"filter": {"state": "held"}}, content_type="application/json")
    assert by_filter.status_code == 400
    mine = client.post("/api/jobs/preview/", {"letters": [my_letter.pk]}, content_type="application/json")
    assert mine.status_code == 200 and mine.json()["count"] == 1
