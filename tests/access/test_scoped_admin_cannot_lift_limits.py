"""Issue 28, finding 8: an admin limited to place A can neither lift nor widen limits beyond
their own, theirs or anyone's: POST /api/roles/ with ``clear_limits`` (for themselves or
another), with limits naming B's place or the whole broker, or changing the role of a user who
sees beyond A, answers 403, changes nothing and is audited; B's letters stay closed to them.
Within A they may still limit someone and give them a role."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from console.access.roles import ADMIN, VIEWER, role_of, set_role
from console.models import AuditEvent, RoleScope

pytestmark = pytest.mark.django_db


def _as(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_a_scoped_admin_cannot_lift_or_widen_limits(places_a_and_b, people, django_user_model):
    a, b = places_a_and_b.a, places_a_and_b.b
    adam = django_user_model.objects.create_user("adam")
    set_role(adam, ADMIN)
    RoleScope.objects.create(user=adam, place=a)
    api = _as(adam)
    limits = lambda user: sorted(RoleScope.objects.filter(user=user).values_list("broker_id", "place_id"))  # noqa: E731
    before = {user.pk: limits(user) for user in (adam, places_a_and_b.otto, people["viewer"])}

    for asked in ({"user": "adam", "clear_limits": True},
                  {"user": "otto", "clear_limits": True},
                  {"user": "adam", "places": [a.pk, b.pk]},
                  {"user": "adam", "brokers": [a.broker_id]},
                  {"user": "otto", "places": [b.pk]},
                  {"user": "vera", "role": ADMIN},  # unlimited: would become an unlimited admin
                  {"user": "vera", "places": [a.pk]},  # sees beyond A: not adam's to narrow
                  {"user": "ada", "role": VIEWER}):
        answer = api.post("/api/roles/", {**asked, "reason": "try"}, format="json")
        assert answer.status_code == 403, (asked, answer.content)
        assert "billing" not in answer.content.decode()
    assert {user.pk: limits(user) for user in (adam, places_a_and_b.otto, people["viewer"])} == before
    assert (role_of(people["viewer"]), role_of(people["admin"])) == (VIEWER, ADMIN)
    assert AuditEvent.objects.filter(action="grant_refused", outcome="refused", actor_name="adam").count() == 8
    assert not AuditEvent.objects.filter(action__in=["grant_role", "grant_scope"]).exists()
    assert [letter["id"] for letter in api.get("/api/letters/").json()["results"]] == [places_a_and_b.a_letter.pk]

    newcomer = django_user_model.objects.create_user("nina")  # no role yet: sees nothing
    given = api.post("/api/roles/", {"user": "nina", "role": VIEWER, "places": [a.pk]}, format="json")
    assert given.status_code == 200, given.content
    assert role_of(newcomer) == VIEWER and limits(newcomer) == [(None, a.pk)]
    assert api.post("/api/roles/", {"user": "otto", "role": VIEWER}, format="json").status_code == 200


def test_a_scoped_admin_reads_others_limits_beyond_their_own_unnamed(places_a_and_b, people, django_user_model,
                                                                     client):
    adam = django_user_model.objects.create_user("adam")
    set_role(adam, ADMIN)
    RoleScope.objects.create(user=adam, place=places_a_and_b.a)
    bea = django_user_model.objects.create_user("bea")
    set_role(bea, VIEWER)
    RoleScope.objects.create(user=bea, place=places_a_and_b.b)
    listed = {row["user"]: row["limits"] for row in _as(adam).get("/api/roles/").json()}
    assert listed["otto"] == ["mem:orders.dlq"] and listed["bea"] == ["places beyond your limits"]
    assert "billing" not in str(listed)
    client.force_login(adam)
    assert "billing" not in client.get("/roles/").content.decode()
    assert {row["user"]: row["limits"] for row in _as(people["admin"]).get("/api/roles/").json()}["bea"] == [
        "mem:billing.dlq"]
