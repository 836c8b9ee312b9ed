"""Signing in through the tests' real OpenID provider (tests.identity_provider), for the console's
issue 33 tests: the console set up for the provider, a person signed in with Django's test client
(the provider's login form posted over loopback HTTP, the code exchanged by the console itself),
or in Chromium through the provider's page.

``provider_signed_in_as(user)`` replaces the access tests' ``signed_in_as``: the user gets a
provider account in a group of their own, mapped to their role and limits, and the session the
test client holds is the one the provider's sign-in made (which applied that mapping again).
"""

from __future__ import annotations

import re
from contextlib import nullcontext
from html import unescape
from urllib.parse import urljoin, urlsplit

import httpx
import pytest

from console.access.roles import role_of
from console.models import ClaimMapping, ClaimMappingLimit, ExternalIdentity, RoleScope

CALLBACK = "/sign-in/provider/callback/"
TEST_SERVER = "http://testserver"


def configure(provider, settings, console_url: str, **more) -> None:
    """Point the console at the provider and register the console's URLs there."""
    settings.DLO_OIDC_NAME = "the identity provider"
    for name, value in more.items():
        setattr(settings, name, value)
    provider.set_console_redirects([console_url + CALLBACK], [console_url + "/sign-in/"])


def through_provider(start_location: str, username: str, password: str, idp: httpx.Client | None = None) -> str:
    """Follow the provider from its authorization URL, posting its login form, until it sends the
    browser back to the console; the console URL it sends to (with code and state). ``idp``: the
    browser's cookies at the provider, kept by the caller (a new jar when None)."""
    url = start_location
    with (httpx.Client(follow_redirects=False, timeout=10) if idp is None else nullcontext(idp)) as idp:
        response = idp.get(url)
        for _ in range(10):
            if response.is_redirect:
                url = urljoin(url, response.headers["location"])
                if urlsplit(url).netloc != urlsplit(start_location).netloc:
                    return url
                response = idp.get(url)
                continue
            assert response.status_code == 200 and 'name="login"' in response.text, response.text[:500]
            action = unescape(re.search(r'<form[^>]*action="([^"]+)"', response.text)[1])
            response = idp.post(urljoin(url, action), data={"login": username, "password": password})
            assert "Wrong username or password" not in response.text
        raise AssertionError("the provider never sent the browser back")


def sign_in(client, username: str, password: str, idp: httpx.Client | None = None):
    """Sign in with the test client through the provider; the console's answer to the callback.
    ``idp``: the browser's cookies at the provider (see :func:`through_provider`)."""
    start = client.get("/sign-in/provider/")
    assert start.status_code == 302, start.content[:300]
    back = through_provider(start["Location"], username, password, idp)
    assert back.startswith(TEST_SERVER + CALLBACK), back
    return client.get(back[len(TEST_SERVER):])


def mirror_in_groups(provider, user) -> str:
    """Give ``user`` a provider account whose one group maps to exactly their present role and
    limits, linked to them (as their first sign-in would have); the account's password."""
    group, password = f"dlo-{user.get_username()}", f"{user.get_username()}-idp-pass"
    mapping, _ = ClaimMapping.objects.update_or_create(group=group, defaults={"role": role_of(user)})
    mapping.limits.all().delete()
    for row in RoleScope.objects.filter(user=user):
        ClaimMappingLimit.objects.create(mapping=mapping, broker_id=row.broker_id, place_id=row.place_id,
                                         named=row.named)
    ExternalIdentity.objects.get_or_create(issuer=provider.issuer, subject=user.get_username(),
                                           defaults={"user": user})
    provider.set_user(user.get_username(), password, [group])
    return password


@pytest.fixture
def provider_signed_in_as(client, oidc_settings, settings):
    """``signed_in_as(user)`` through the provider: the test client with the session the
    provider's sign-in gave that user (None: signed out)."""
    configure(oidc_settings, settings, TEST_SERVER)

    def sign(user):
        client.logout()
        if user is not None:
            answer = sign_in(client, user.get_username(), mirror_in_groups(oidc_settings, user))
            assert answer.status_code == 302, answer.content[:500]
            assert client.session["_auth_user_id"] == str(user.pk)
        return client

    return sign
