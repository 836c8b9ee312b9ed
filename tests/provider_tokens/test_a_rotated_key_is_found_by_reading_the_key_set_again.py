"""The provider rotates its signing key: the console, holding the old key set in its cache,
reads the set again when a token names a key it does not know, and accepts the new key's
tokens, at once or, when the set is slower to read than a script's wait, at the try the
503's Retry-After asks for. The rotation is real: the provider is restarted on the same issuer
with a new key."""

from __future__ import annotations

import time

import pytest

from console.security import provider
from console.services.claim_mappings import do_set_mapping
from tests.identity_provider import free_port, running_provider

pytestmark = pytest.mark.django_db


def test_a_new_key_is_found_after_the_rotation(tmp_path, settings, places, bearer, monkeypatch):
    # No wait between two reads of the key set (30 s in production).
    monkeypatch.setattr(provider, "REFETCH_COOLDOWN_SECONDS", 0)
    provider.forget()
    do_set_mapping(actor="tests", group="orders-team", role="operator", places=[places.orders])
    port = free_port()
    try:
        with running_provider(tmp_path / "before", port) as before:
            settings.DLO_OIDC_ISSUER, settings.DLO_OIDC_API_AUDIENCE = before.issuer, before.api_audience
            before.set_script_groups(["orders-team"])
            assert bearer(before.client_credentials_token()).get("/api/letters/").status_code == 200
            old_kid = before.kid
        with running_provider(tmp_path / "after", port) as after:
            assert after.issuer == before.issuer and after.kid != old_kid
            after.set_script_groups(["orders-team"])
            token = after.client_credentials_token()
            response = bearer(token).get("/api/letters/")
            if response.status_code == 503:  # the new set not read within a script's wait (80 ms)
                assert response["Retry-After"] == "1"
                time.sleep(1)
                response = bearer(token).get("/api/letters/")
            assert response.status_code == 200, response.content
            assert [row["id"] for row in response.json()["results"]] == [places.orders_letter.pk]
    finally:
        provider.forget()
