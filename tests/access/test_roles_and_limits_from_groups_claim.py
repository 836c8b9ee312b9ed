"""Issue 33: the role and limits a person gets from their provider's groups claim, applied at
every sign-in (console.services.claims.access_from_claims): the strongest mapped role, limited
as the groups giving it are; a group left loses what it gave; no mapped group, no role; a
removed place allows nothing; every change audited with the groups and mappings that decided."""

from __future__ import annotations

import json

import pytest

from console.access.claims import groups_in
from console.access.roles import role_of
from console.access.scope import scope_of, visible
from console.models import AuditEvent, DeadLetter, ExternalIdentity
from console.services.claim_mappings import do_set_mapping
from console.services.claims import access_from_claims
from tests.access.conftest import places_a_and_b  # noqa: F401  (fixture)

pytestmark = pytest.mark.django_db
ISSUER = "https://idp.example.test"


@pytest.fixture
def mapped(places_a_and_b):  # noqa: F811
    a, b = places_a_and_b.a, places_a_and_b.b
    do_set_mapping(actor="tests", group="dlo-admins", role="admin")
    do_set_mapping(actor="tests", group="orders-team", role="operator", places=[a])
    do_set_mapping(actor="tests", group="billing-team", role="operator", places=[b])
    do_set_mapping(actor="tests", group="billing-watchers", role="viewer", places=[b])
    return places_a_and_b


def sign_in(groups, sub="u-1", **extra):
    return access_from_claims({"sub": sub, "preferred_username": "pat", "groups": groups, **extra},
                              issuer=ISSUER, via="sign-in")


def test_a_group_gives_its_role_and_limits_and_the_person_sees_only_their_place(mapped):
    access = sign_in(["orders-team", "unrelated"])
    user = access.user
    assert user.username == "pat" and not user.has_usable_password()
    assert role_of(user) == "operator" and access.groups == ["orders-team"]
    assert scope_of(user).places == {mapped.a.pk}
    assert set(visible(user, DeadLetter.objects.all()).values_list("pk", flat=True)) == {mapped.a_letter.pk}
    identity = ExternalIdentity.objects.get(user=user)
    assert (identity.issuer, identity.subject, identity.groups) == (ISSUER, "u-1", ["orders-team"])


def test_the_strongest_role_wins_and_only_its_groups_limits_count(mapped):
    access = sign_in(["orders-team", "billing-watchers"])
    # operator on A only: the viewer group's B is not added to the operator role.
    assert access.role == "operator" and scope_of(access.user).places == {mapped.a.pk}
    access = sign_in(["orders-team", "billing-team"])
    assert access.role == "operator" and scope_of(access.user).places == {mapped.a.pk, mapped.b.pk}
    access = sign_in(["orders-team", "dlo-admins"])
    assert access.role == "admin" and scope_of(access.user).unlimited


def test_leaving_a_group_takes_away_what_it_gave_at_the_next_sign_in(mapped):
    user = sign_in(["dlo-admins"]).user
    assert role_of(user) == "admin"
    access = sign_in(["orders-team"])
    assert access.user == user and access.changed and role_of(user) == "operator"
    assert scope_of(type(user).objects.get(pk=user.pk)).places == {mapped.a.pk}
    access = sign_in(["somewhere-else"])
    assert access.role == "" and role_of(user) == ""
    assert not type(user).objects.get(pk=user.pk).has_perm("console.view_console")


def test_no_mapped_group_makes_no_account(mapped, django_user_model):
    before = django_user_model.objects.count()
    access = sign_in(["nobody-mapped"], sub="stranger")
    assert access.user is None and access.role == ""
    assert django_user_model.objects.count() == before


def test_a_namesake_password_account_is_not_taken_over(mapped, people):
    access = sign_in(["dlo-admins"], sub="u-ada", preferred_username="ada")
    assert access.user != people["admin"] and access.user.username == "ada-2"


def test_a_removed_place_allows_nothing_not_everything(mapped):
    user = sign_in(["orders-team"]).user
    DeadLetter.objects.filter(place=mapped.a).delete()  # letters keep their place from going
    mapped.a.delete()
    access = sign_in(["orders-team"])
    user.refresh_from_db()
    assert access.role == "operator" and not scope_of(user).unlimited
    assert not visible(user, DeadLetter.objects.all()).exists() and DeadLetter.objects.exists()


def test_changes_are_audited_with_the_deciding_groups_and_a_repeat_writes_nothing(mapped):
    sign_in(["orders-team", "unrelated"])
    event = AuditEvent.objects.filter(action="access.from_claims").get()
    assert event.actor_name == f"provider {ISSUER}" and event.target == "pat"
    assert event.details["groups"] == ["orders-team"] and event.details["after"]["role"] == "operator"
    assert event.details["subject"] == "u-1" and "unrelated" not in json.dumps(event.details)
    again = sign_in(["orders-team", "unrelated"])
    assert not again.changed and AuditEvent.objects.filter(action="access.from_claims").count() == 1


def test_the_mapping_may_come_from_the_environment(mapped, settings):
    settings.DLO_OIDC_ROLE_MAPPING = json.dumps([
        {"group": "ops", "role": "viewer", "places": [{"broker": "mem", "name": "billing.dlq"}]},
        {"group": "gone", "role": "admin", "places": [{"broker": "mem", "name": "no-such.dlq"}]}])
    access = sign_in(["orders-team", "ops"])  # the console's mappings are not read any more
    assert access.role == "viewer" and scope_of(access.user).places == {mapped.b.pk}
    assert access.mappings == ["file (ops)"]
    access = sign_in(["gone"], sub="u-2")
    assert access.role == "admin" and not visible(access.user, DeadLetter.objects.all()).exists()


def test_groups_are_read_from_a_dotted_path_and_a_single_string():
    claims = {"realm_access": {"roles": ["b", "a", 7]}, "groups": "solo"}
    assert groups_in(claims, "realm_access.roles") == ["a", "b"]
    assert groups_in(claims, "groups") == ["solo"] and groups_in(claims, "missing.path") == []
