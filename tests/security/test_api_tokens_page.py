"""API tokens in the browser: make one (its key shown once), use it, revoke it; only an admin
revokes someone else's; each change is audited without the key."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from console.models import AuditEvent

pytestmark = pytest.mark.django_db


def _api_status(key: str) -> int | str:
    """200 for a working key; "refused" when the API says the token is not valid."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    response = client.get("/api/audit/verify/")
    if response.status_code in (401, 403) and response.json() == {"detail": "Invalid token."}:
        return "refused"
    return response.status_code


def test_make_use_and_revoke_a_token(client, operator):
    client.force_login(operator)
    made = client.post(reverse("token-create"))
    key = Token.objects.get(user=operator).key
    assert f'<code id="new-token">{key}</code>' in made.content.decode() and made["Cache-Control"] == "no-store"
    assert _api_status(key) == 200

    listed = client.get(reverse("tokens")).content.decode()
    assert key not in listed and f"<code>{key[:4]}…</code>" in listed  # never shown again

    replaced = client.post(reverse("token-create"))
    new_key = Token.objects.get(user=operator).key
    assert new_key != key and new_key in replaced.content.decode()
    assert _api_status(key) == "refused"  # the old one stopped working

    client.post(reverse("token-revoke", args=[operator.pk]), follow=True)
    assert _api_status(new_key) == "refused" and not Token.objects.filter(user=operator).exists()
    actions = list(AuditEvent.objects.filter(action__startswith="token.").order_by("id")
                   .values_list("action", "actor_name"))
    assert actions == [("token.created", "olga"), ("token.created", "olga"), ("token.revoked", "olga")]
    assert not AuditEvent.objects.filter(details__icontains=key[4:]).exists()


def test_only_an_admin_revokes_another_users_token(client, operator, django_user_model):
    bob = django_user_model.objects.create_user("bob", password="bob-pass-123")
    bobs = Token.objects.create(user=bob)
    client.force_login(operator)
    assert "bob" not in client.get(reverse("tokens")).content.decode()  # olga sees only hers
    refused = client.post(reverse("token-revoke", args=[bob.pk]), follow=True)
    assert "only an admin may revoke another user" in refused.content.decode()
    assert Token.objects.filter(pk=bobs.pk).exists()

    admin = django_user_model.objects.create_superuser("ada", password="ada-pass-123")
    client.force_login(admin)
    assert "bob" in client.get(reverse("tokens")).content.decode()
    client.post(reverse("token-revoke", args=[bob.pk]), {"reason": "left the team"})
    assert not Token.objects.filter(pk=bobs.pk).exists()
    event = AuditEvent.objects.get(action="token.revoked")
    assert (event.actor_name, event.reason, event.details["user"]) == ("ada", "left the team", "bob")
