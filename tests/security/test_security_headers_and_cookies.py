"""Every answer carries the security headers: a Content Security Policy without inline script,
X-Frame-Options DENY, nosniff and a Referrer-Policy; HSTS and secure cookies once TLS is on;
htmx requests need the CSRF token like forms."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from django.test import Client
from django.urls import reverse

pytestmark = pytest.mark.django_db

POLICY = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; object-src 'none'; "
          "base-uri 'none'; frame-ancestors 'none'; form-action 'self'")


def test_pages_and_the_api_send_the_headers(client, operator, place):
    responses = {reverse("login"): client.get(reverse("login"))}
    client.force_login(operator)
    for url in (reverse("inventory"), reverse("place", args=[place.pk]), "/api/places/"):
        responses[url] = client.get(url)
    for url, response in responses.items():
        assert response.status_code == 200, url
        assert response["Content-Security-Policy"] == POLICY, url
        assert response["X-Frame-Options"] == "DENY", url
        assert response["X-Content-Type-Options"] == "nosniff", url
        assert response["Referrer-Policy"] == "same-origin", url
        assert "Strict-Transport-Security" not in response, url  # plain HTTP in tests


def test_with_tls_on_the_settings_turn_on_hsts_and_secure_cookies():
    """The settings as a deployment with TLS gets them (read in a fresh process from its environment)."""
    env = {**os.environ, "SECURE_SSL_REDIRECT": "true", "SECURE_COOKIES": "true", "SECRET_KEY": "x" * 50,
           "DJANGO_SETTINGS_MODULE": "console.settings",
           "DATABASE_URL": "postgres://nobody@127.0.0.1:1/unused"}  # only read, never connected to
    code = ("import json; from django.conf import settings as s; print(json.dumps([s.SECURE_HSTS_SECONDS, "
            "s.SESSION_COOKIE_SECURE, s.CSRF_COOKIE_SECURE, s.SESSION_EXPIRE_AT_BROWSER_CLOSE, "
            "s.SECURE_SSL_REDIRECT]))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == [31536000, True, True, True, True]


def test_hsts_is_sent_over_https_when_configured(settings, operator):
    settings.SECURE_HSTS_SECONDS = 31536000
    client = Client()
    client.force_login(operator)
    response = client.get(reverse("inventory"), secure=True)
    assert response["Strict-Transport-Security"] == "max-age=31536000"


def test_an_htmx_post_without_the_csrf_token_is_refused(operator, place):
    client = Client(enforce_csrf_checks=True)
    client.force_login(operator)
    page = client.get(reverse("place", args=[place.pk]))
    token = page.context["csrf_token"]
    htmx = {"HTTP_HX_REQUEST": "true"}
    refused = client.post(reverse("broker-check", args=[place.broker_id]), **htmx)
    assert refused.status_code == 403 and b"CSRF" in refused.content
    accepted = client.post(reverse("broker-check", args=[place.broker_id]), HTTP_X_CSRFTOKEN=str(token), **htmx)
    assert accepted.status_code != 403
    # base.html hands every htmx request the token in a header.
    assert f'hx-headers=\'{{"X-CSRFToken": "{token}"}}\'' in page.content.decode()


def test_a_sign_in_ends_with_the_browser_session(client, operator):
    response = client.post(reverse("login"), {"username": "olga", "password": "triage-pass-123"})
    cookie = response.cookies["sessionid"]
    assert cookie["max-age"] == "" and cookie["expires"] == ""  # a session cookie: gone at browser close
    assert cookie["httponly"] is True
    assert client.session.get_expiry_age() <= 8 * 3600  # and at most eight hours on the server
