"""Issue 45: a sign-out at the identity provider reaches every console session of that person
(OpenID Connect Back-Channel Logout 1.0, console.security.logout). The provider is the tests'
real one (tests.identity_provider); it posts its logout token to the console's live server.
A logout token that is not the provider's, or not meant for the console, or not a logout token
at all, is refused with 400 and audited."""

from __future__ import annotations

import re
import time
from html import unescape
from urllib.parse import urljoin

import httpx
import pytest
from django.test import Client

from console.models import AuditEvent, ProviderSession
from console.services.claim_mappings import do_set_mapping
from tests.oidc_sign_in import TEST_SERVER, configure, sign_in

BACK_CHANNEL = "/sign-in/provider/backchannel-logout/"
EVENT = {"http://schemas.openid.net/event/backchannel-logout": {}}


@pytest.fixture
def provider(oidc_settings, settings):
    configure(oidc_settings, settings, TEST_SERVER)
    do_set_mapping(actor="tests", group="orders-team", role="operator")
    oidc_settings.set_user("pia", "pia-pass", ["orders-team"])
    return oidc_settings


def _sign_out_at_the_provider(site, idp: httpx.Client) -> None:
    """What the person does at the provider in one browser: its end-session page, confirmed."""
    url = site.discovery()["end_session_endpoint"] + f"?client_id={site.console.client_id}"
    page = idp.get(url)
    form = re.search(r'<form[^>]*id="op.logoutForm"[^>]*>(.*?)</form>', page.text, re.S) or re.search(
        r"<form[^>]*>(.*?)</form>", page.text, re.S)
    assert form is not None, page.text[:500]
    action = unescape(re.search(r'action="([^"]+)"', form.group(0))[1])
    fields = {unescape(name): unescape(value) for name, value in
              re.findall(r'<input[^>]*name="([^"]+)"[^>]*value="([^"]*)"', form.group(0))}
    done = idp.post(urljoin(url, action), data={**fields, "logout": "yes"})
    assert done.status_code in (200, 302, 303), done.text[:500]


@pytest.mark.django_db(transaction=True)
def test_a_sign_out_at_the_provider_ends_the_sessions_of_both_browsers(provider, live_server):
    # Node resolves "localhost" to ::1 first; the live server listens on 127.0.0.1.
    provider.set_console_back_channel(live_server.url.replace("localhost", "127.0.0.1") + BACK_CHANNEL)
    laptop, phone = Client(), Client()
    with httpx.Client(follow_redirects=False, timeout=10) as laptop_at_idp:
        assert sign_in(laptop, "pia", "pia-pass", laptop_at_idp).status_code == 302
        assert sign_in(phone, "pia", "pia-pass").status_code == 302
        assert laptop.get("/").status_code == 200 and phone.get("/").status_code == 200
        assert ProviderSession.objects.filter(subject="pia").count() == 2

        _sign_out_at_the_provider(provider, laptop_at_idp)

    for browser in (laptop, phone):
        answer = browser.get("/")
        assert answer.status_code == 302 and answer["Location"].startswith("/sign-in/")
    assert not ProviderSession.objects.filter(subject="pia").exists()
    (event,) = AuditEvent.objects.filter(action="sign-out.back-channel")
    assert event.details["subject"] == "pia" and event.details["sessions"] == 2 and event.details["sid"]


def _logout_token(site, **changes) -> str:
    claims = {"iss": site.issuer, "aud": site.console.client_id, "iat": int(time.time()), "jti": "j-1",
              "sub": "pia", "events": EVENT}
    claims.update(changes)
    return site.sign({k: v for k, v in claims.items() if v is not None}, typ="logout+jwt")


@pytest.mark.django_db
@pytest.mark.parametrize(("case", "why"), [
    ("bad signature", "signature does not verify"),
    ("wrong audience", "not meant for this console"),
    ("no events", "no back-channel logout event"),
    ("a nonce", "carries no nonce"),
])
def test_a_logout_token_that_is_not_right_is_refused_and_audited(provider, client, case, why):
    assert sign_in(client, "pia", "pia-pass").status_code == 302
    if case == "bad signature":
        good = _logout_token(provider)
        head, body, signature = good.split(".")
        token = f"{head}.{body}.{signature[:-4]}AAAA"
    elif case == "wrong audience":
        token = _logout_token(provider, aud="someone-else")
    elif case == "no events":
        token = _logout_token(provider, events=None)
    else:
        token = _logout_token(provider, nonce="n-1")
    answer = Client().post(BACK_CHANNEL, {"logout_token": token})
    assert answer.status_code == 400 and why in answer.json()["error_description"]
    assert answer.json()["error"] == "invalid_request"
    (refused,) = AuditEvent.objects.filter(action="sign-out.back-channel.refused")
    assert why in refused.details["why"] and token not in str(refused.details)
    assert client.get("/").status_code == 200  # still signed in


@pytest.mark.django_db
def test_a_signed_logout_token_for_the_subject_ends_the_session(provider, client):
    assert sign_in(client, "pia", "pia-pass").status_code == 302
    answer = Client().post(BACK_CHANNEL, {"logout_token": _logout_token(provider)})
    assert answer.status_code == 200 and answer["Cache-Control"] == "no-store"
    assert client.get("/").status_code == 302
