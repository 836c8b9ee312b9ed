"""Issue 28, finding 3: on a failure group spanning places A and B (one origin dying into both),
a note carries the places of the group's letters its author could see when writing it, and a
reader sees it only when they may see all of them. An operator limited to A never reads the
note an unlimited admin wrote about B's letters: not in GET /api/groups/<fp>/, not on the
group's page, not in its timeline; he reads his own. A note written before notes carried places
takes them from its own audit row (migration 0032); one that no row explains is read only by
users without limits."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps
from rest_framework.test import APIClient

from console.models import GroupNote, RoleScope
from tests.access.conftest import shows_nothing_of_b
from tests.web.factory import store_letter

pytestmark = pytest.mark.django_db

ABOUT_B = "ledger 991 out of balance: see billing"


def _as(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.fixture
def spanning(places_a_and_b):
    """One origin ("orders") whose letters died into A and into B: one failure group over both."""
    a_letter = store_letter(places_a_and_b.a, b'{"n": 1}', origin="orders", exception_type="Timeout",
                            exception_message="upstream slow")
    b_letter = store_letter(places_a_and_b.b, b'{"n": 2}', origin="orders", exception_type="Timeout",
                            exception_message="upstream slow")
    assert a_letter.fingerprint == b_letter.fingerprint
    return a_letter.fingerprint


def test_a_note_about_b_is_read_by_those_who_see_b_only(places_a_and_b, spanning, people, client):
    fp, otto, ada = spanning, places_a_and_b.otto, people["admin"]
    assert _as(ada).post(f"/api/groups/{fp}/notes/", {"text": ABOUT_B}, format="json").status_code == 201
    assert _as(otto).post(f"/api/groups/{fp}/notes/", {"text": "orders retried at 5pm"},
                          format="json").status_code == 201
    assert [sorted(n.places) for n in GroupNote.objects.order_by("id")] == [
        sorted([places_a_and_b.a.pk, places_a_and_b.b.pk]), [places_a_and_b.a.pk]]

    seen = _as(otto).get(f"/api/groups/{fp}/")
    assert seen.status_code == 200
    assert [n["text"] for n in seen.json()["notes"]] == ["orders retried at 5pm"]
    assert [e["action"] for e in seen.json()["timeline"]] == ["group.note"]
    shows_nothing_of_b(seen.content.decode())
    client.force_login(otto)
    page = client.get(f"/groups/{fp}/")
    assert page.status_code == 200 and "orders retried at 5pm" in page.content.decode()
    shows_nothing_of_b(page.content.decode())

    # An admin limited to A reads the same; the unlimited admin reads both.
    scoped_admin = people["admin"].__class__.objects.create_user("adam")
    from console.access.roles import ADMIN, set_role

    set_role(scoped_admin, ADMIN)
    RoleScope.objects.create(user=scoped_admin, place=places_a_and_b.a)
    assert [n["text"] for n in _as(scoped_admin).get(f"/api/groups/{fp}/").json()["notes"]] == [
        "orders retried at 5pm"]
    assert [n["text"] for n in _as(ada).get(f"/api/groups/{fp}/").json()["notes"]] == [
        ABOUT_B, "orders retried at 5pm"]


def test_a_note_of_before_takes_its_places_from_its_audit_row_or_is_for_the_unlimited(
        places_a_and_b, spanning, people):
    fp, otto, ada = spanning, places_a_and_b.otto, people["admin"]
    _as(ada).post(f"/api/groups/{fp}/notes/", {"text": ABOUT_B}, format="json")
    _as(otto).post(f"/api/groups/{fp}/notes/", {"text": "orders retried at 5pm"}, format="json")
    about_b, otto_note = GroupNote.objects.order_by("id")
    GroupNote.objects.update(places=[])  # as the notes were before migration 0032
    unexplained = GroupNote.objects.create(group=about_b.group, author="ada", text="card-4111-in-the-diff", places=[])
    assert _as(otto).get(f"/api/groups/{fp}/").json()["notes"] == []  # fail closed

    migration = importlib.import_module("console.migrations.0032_group_note_places")
    migration.places_from_the_audit(apps, None)

    assert sorted(GroupNote.objects.get(pk=about_b.pk).places) == sorted([places_a_and_b.a.pk, places_a_and_b.b.pk])
    assert GroupNote.objects.get(pk=otto_note.pk).places == [places_a_and_b.a.pk]
    assert GroupNote.objects.get(pk=unexplained.pk).places == []
    seen = _as(otto).get(f"/api/groups/{fp}/")
    assert [n["text"] for n in seen.json()["notes"]] == ["orders retried at 5pm"]
    shows_nothing_of_b(seen.content.decode())
    assert len(_as(ada).get(f"/api/groups/{fp}/").json()["notes"]) == 3
