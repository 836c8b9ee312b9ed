"""Five failed sign-ins for one name, or from one address, within 15 minutes lock signing in
for 15 minutes, with a message that says so; the right password does not get through meanwhile."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import SESSION_KEY
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from console.models import SignInFailure

pytestmark = [pytest.mark.django_db, pytest.mark.password_hashing]

LOCKED = "Too many failed sign-ins for this account or from this address. Try again in 15 minutes."


def _sign_in(client: Client, username: str, password: str):
    return client.post(reverse("login"), {"username": username, "password": password})


def test_five_wrong_passwords_lock_the_name_even_for_the_right_one(operator):
    guesser = Client(REMOTE_ADDR="203.0.113.7")
    for _ in range(5):
        wrong = _sign_in(guesser, "olga", "guess")
        assert wrong.status_code == 200 and "Please enter a correct username and password" in wrong.content.decode()
    # From another address too: the name is locked, not just the guesser's address.
    olga = Client(REMOTE_ADDR="198.51.100.2")
    locked = _sign_in(olga, "olga", "triage-pass-123")
    assert locked.status_code == 200 and LOCKED in locked.content.decode()
    assert SESSION_KEY not in olga.session
    assert SignInFailure.objects.count() == 5  # refusals while locked are not counted

    # Fifteen minutes after the last failure, the right password works again; the failures
    # stay on record (they no longer count against olga).
    SignInFailure.objects.update(at=timezone.now() - timedelta(minutes=15, seconds=1))
    signed_in = _sign_in(olga, "olga", "triage-pass-123")
    assert signed_in.status_code == 302 and olga.session[SESSION_KEY] == str(operator.pk)
    assert SignInFailure.objects.filter(username="olga").count() == 5


def test_five_failures_from_one_address_lock_that_address_for_every_name(operator):
    sprayer = Client(REMOTE_ADDR="203.0.113.9")
    for name in ("admin", "root", "olga", "bob", "demo"):
        _sign_in(sprayer, name, "password1")
    assert LOCKED in _sign_in(sprayer, "olga", "triage-pass-123").content.decode()
    # Olga from her own address is not locked out: four of the five were other names.
    assert _sign_in(Client(REMOTE_ADDR="198.51.100.2"), "olga", "triage-pass-123").status_code == 302


def test_a_successful_sign_in_forgets_earlier_failures(operator):
    client = Client(REMOTE_ADDR="198.51.100.3")
    for _ in range(4):
        _sign_in(client, "olga", "typo")
    assert _sign_in(client, "olga", "triage-pass-123").status_code == 302
    client.logout()
    for _ in range(4):
        _sign_in(client, "olga", "typo")
    assert _sign_in(client, "olga", "triage-pass-123").status_code == 302
