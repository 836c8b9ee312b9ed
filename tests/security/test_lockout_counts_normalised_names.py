"""The lockout counts a name the way Django signs it in (NFKC-normalised) and regardless of
case: a full-width or upper-case spelling of a locked name gets no fresh attempts."""

from __future__ import annotations

import pytest
from django.contrib.auth import SESSION_KEY
from django.test import Client
from django.urls import reverse

from console.models import SignInFailure

pytestmark = [pytest.mark.django_db, pytest.mark.password_hashing]

LOCKED = "Too many failed sign-ins for this account"
FULL_WIDTH_OLGA = "\uff4f\uff4c\uff47\uff41"  # ｏｌｇａ: NFKC makes it "olga"


def _sign_in(address: str, username: str, password: str):
    client = Client(REMOTE_ADDR=address)
    return client, client.post(reverse("login"), {"username": username, "password": password})


def test_a_full_width_spelling_of_a_locked_name_is_refused(operator):
    # Without the lock, the full-width spelling signs in as olga: Django normalises it.
    for n in range(5):
        _sign_in(f"203.0.113.{n + 10}", "olga", "guess")
    client, answer = _sign_in("198.51.100.2", FULL_WIDTH_OLGA, "triage-pass-123")
    assert LOCKED in answer.content.decode()
    assert SESSION_KEY not in client.session


def test_failures_under_different_spellings_add_up_to_one_lock(operator):
    for n, spelling in enumerate(["OLGA", FULL_WIDTH_OLGA, "Olga", " olga", "\uff2f\uff2c\uff27\uff21"]):
        _sign_in(f"203.0.113.{n + 20}", spelling, "guess")
    assert set(SignInFailure.objects.values_list("username", flat=True)) == {"olga"}
    client, answer = _sign_in("198.51.100.2", "olga", "triage-pass-123")
    assert LOCKED in answer.content.decode()
    assert SESSION_KEY not in client.session
