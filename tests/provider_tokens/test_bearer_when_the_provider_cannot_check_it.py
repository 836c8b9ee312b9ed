"""A bearer token the console cannot check: with no provider configured for the API it is
refused (401, saying so); with the provider unreachable the answer is 503 (try again), never
a 200 and never a refusal that blames the token."""

from __future__ import annotations

import pytest

from console.security import provider
from tests.identity_provider import free_port

pytestmark = pytest.mark.django_db


def test_no_audience_configured_refuses_every_bearer_token(oidc_settings, places, bearer, settings):
    settings.DLO_OIDC_API_AUDIENCE = ""
    response = bearer(oidc_settings.client_credentials_token()).get("/api/letters/")
    assert response.status_code == 401
    assert "accepts no identity provider's tokens" in response.json()["detail"]


def test_an_unreachable_provider_answers_503(oidc_settings, places, bearer, settings):
    token = oidc_settings.client_credentials_token()
    settings.DLO_OIDC_ISSUER = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    provider.forget()
    response = bearer(token).get("/api/letters/")
    assert response.status_code == 503
    assert "could not be reached" in response.json()["detail"]
