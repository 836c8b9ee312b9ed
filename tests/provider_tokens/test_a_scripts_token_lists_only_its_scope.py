"""A script's access token from the identity provider (client credentials) signs it in to the
API as a user of its own, with the role and places its groups claim is mapped to, taken anew
from every token: it lists only the letters of those places, and a change of its groups at the
provider changes what its next token sees."""

from __future__ import annotations

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from console.access.roles import limits_of, role_of
from console.models import AuditEvent, ExternalIdentity
from console.services.claim_mappings import do_set_mapping

pytestmark = pytest.mark.django_db


def listed(client) -> list[int]:
    response = client.get("/api/letters/")
    assert response.status_code == 200, response.content
    return [row["id"] for row in response.json()["results"]]


def test_the_token_lists_only_letters_of_the_mapped_place(oidc_settings, places, bearer):
    provider = oidc_settings
    do_set_mapping(actor="tests", group="orders-team", role="operator", places=[places.orders])
    do_set_mapping(actor="tests", group="billing-team", role="viewer", places=[places.billing])
    provider.set_script_groups(["orders-team", "not-mapped"])

    client = bearer(provider.client_credentials_token())
    assert listed(client) == [places.orders_letter.pk]
    assert client.get(f"/api/letters/{places.orders_letter.pk}/").status_code == 200
    assert client.get(f"/api/letters/{places.billing_letter.pk}/").status_code == 404
    assert [place["name"] for place in client.get("/api/places/").json()] == ["orders.dlq"]

    # The script is a user of its own, known by the provider and the subject, with no password,
    # and shows where its role came from.
    identity = ExternalIdentity.objects.get(issuer=provider.issuer, subject=provider.script.client_id)
    assert (identity.via, identity.role, identity.groups) == ("token", "operator", ["orders-team"])
    assert role_of(identity.user) == "operator" and limits_of(identity.user) == [str(places.orders)]
    assert not identity.user.has_usable_password()
    applied = AuditEvent.objects.get(action="access.from_claims", target=identity.user.username)
    assert applied.details["via"] == "token" and applied.details["groups"] == ["orders-team"]


def test_new_groups_at_the_provider_give_the_next_token_a_new_scope(oidc_settings, places, bearer):
    provider = oidc_settings
    do_set_mapping(actor="tests", group="orders-team", role="operator", places=[places.orders])
    do_set_mapping(actor="tests", group="billing-team", role="viewer", places=[places.billing])
    provider.set_script_groups(["orders-team"])
    first = bearer(provider.client_credentials_token())
    assert listed(first) == [places.orders_letter.pk]

    provider.set_script_groups(["billing-team"])
    second = bearer(provider.client_credentials_token())
    assert listed(second) == [places.billing_letter.pk]
    # A viewer now: it reads, it may not act.
    refused = second.post(f"/api/places/{places.billing.pk}/capture/", {"reason": "mine now"}, format="json")
    assert refused.status_code == 403
    identity = ExternalIdentity.objects.get(subject=provider.script.client_id)
    assert (identity.role, identity.groups) == ("viewer", ["billing-team"])


def test_a_token_whose_groups_are_mapped_to_nothing_gets_nothing(oidc_settings, places, bearer):
    provider = oidc_settings
    do_set_mapping(actor="tests", group="orders-team", role="operator", places=[places.orders])
    provider.set_script_groups(["someone-elses-team"])
    response = bearer(provider.client_credentials_token()).get("/api/letters/")
    assert response.status_code == 403
    assert "no role" in response.json()["detail"]
    assert not ExternalIdentity.objects.exists()


def test_a_drf_token_still_works_beside_the_providers(oidc_settings, places, operator):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=operator).key}")
    assert sorted(listed(client)) == sorted([places.orders_letter.pk, places.billing_letter.pk])
