"""Issue 45: the identity provider away. The provider (a real one, tests.identity_provider) is
stopped after the console has read its keys: scripts' tokens signed by a key the console knows
are still checked and accepted, one naming a key it does not know answers 503 with Retry-After,
and password sign-in and the pages go on as usual, the sign-in page saying the provider cannot
be reached. Started again with a new key, the provider's new tokens are accepted once the
back-off has passed (the console reads it again in the background, telling callers at once).
How fast they answer is measured by benchmarks/provider_outage.py."""

from __future__ import annotations

import time

import pytest

from console.security import provider
from console.services.claim_mappings import do_set_mapping
from tests.identity_provider import free_port, running_provider

pytestmark = pytest.mark.django_db

REQUESTS = 50


@pytest.fixture
def quick_provider_state(monkeypatch):
    """Keys stale at once (so every request would read them again, were the back-off not
    there), and a back-off of one to two seconds."""
    monkeypatch.setattr(provider, "DEFAULT_SECONDS", 0)
    monkeypatch.setattr(provider, "LEAST_SECONDS", 0)
    monkeypatch.setattr(provider, "REFETCH_COOLDOWN_SECONDS", 0)
    monkeypatch.setattr(provider, "FIRST_BACKOFF_SECONDS", 1.0)
    monkeypatch.setattr(provider, "MOST_BACKOFF_SECONDS", 2.0)
    provider.forget()
    yield
    provider.forget()


def _token(site, kid: str | None = None) -> str:
    """A script's token as the provider issues it; ``kid``: the same, naming another key."""
    token = site.client_credentials_token()
    if kid is None:
        return token
    import jwt

    claims = jwt.decode(token, options={"verify_signature": False})
    return site.sign(claims, kid=kid)


def test_known_keys_are_kept_and_unknown_ones_wait_while_the_provider_is_away(
        tmp_path, settings, places, bearer, client, operator, quick_provider_state):
    do_set_mapping(actor="tests", group="orders-team", role="operator", places=[places.orders])
    port = free_port()
    with running_provider(tmp_path / "before", port) as before:
        settings.DLO_OIDC_ISSUER, settings.DLO_OIDC_API_AUDIENCE = before.issuer, before.api_audience
        settings.DLO_OIDC_CLIENT_ID, settings.DLO_OIDC_CLIENT_SECRET = before.console.client_id, "secret"
        before.set_script_groups(["orders-team"])
        known, unknown = _token(before), _token(before, kid="a-key-the-console-never-saw")
        assert bearer(known).get("/api/letters/").status_code == 200
    # The provider is stopped.

    answers = [bearer(known).get("/api/letters/") for _ in range(REQUESTS)]
    assert [a.status_code for a in answers] == [200] * REQUESTS
    assert {row["id"] for a in answers for row in a.json()["results"]} == {places.orders_letter.pk}

    refused = [bearer(unknown).get("/api/letters/") for _ in range(REQUESTS)]
    assert [a.status_code for a in refused] == [503] * REQUESTS
    assert all(1 <= int(a["Retry-After"]) <= 2 for a in refused)
    assert "could not be reached" in refused[0].json()["detail"]

    health = client.get("/healthz")
    assert health.status_code == 200 and health.json()["status"] == "ok"
    assert health.json()["identity_provider"]["state"] == "away"

    page = client.get("/sign-in/").content.decode()
    assert "cannot be reached just now" in page and 'name="password"' in page
    signed = client.post("/sign-in/", {"username": "olga", "password": "triage-pass-123"})
    assert signed.status_code == 302
    assert client.get("/").status_code == 200

    with running_provider(tmp_path / "after", port) as after:  # back, with a new signing key
        after.set_script_groups(["orders-team"])
        rotated = _token(after)
        # Inside the back-off, and while the console reads the provider again in the background,
        # the answer says how long to wait; the back-off is two seconds at most here.
        answers = [bearer(rotated).get("/api/letters/")]
        while answers[-1].status_code == 503 and len(answers) < 4:
            time.sleep(int(answers[-1]["Retry-After"]))
            answers.append(bearer(rotated).get("/api/letters/"))
        assert answers[-1].status_code == 200, [a.content for a in answers]
        assert sum(int(a["Retry-After"]) for a in answers[:-1]) <= 4
        assert client.get("/healthz").json()["identity_provider"]["state"] == "up"


def test_the_sign_in_button_says_at_once_that_the_provider_is_away(settings, client, quick_provider_state,
                                                                   monkeypatch):
    settings.DLO_OIDC_ISSUER = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    settings.DLO_OIDC_CLIENT_ID = "dlo-console"
    asked = []
    real_get = provider._get
    monkeypatch.setattr(provider, "_get", lambda url: asked.append(url) or real_get(url))
    first = client.get("/sign-in/provider/")
    assert first.status_code == 503 and "cannot be used just now" in first.content.decode()
    again = [client.get("/sign-in/provider/").status_code for _ in range(5)]
    assert again == [503] * 5
    assert len(asked) == 1  # the back-off holds: the provider was asked once
    assert provider.health()["state"] == "away"
