"""Every page asks who you are first; signing in and out works."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.web.factory import store_letter

pytestmark = pytest.mark.django_db


def test_every_page_sends_a_stranger_to_sign_in(client, place):
    letter = store_letter(place)
    pages = [
        reverse("inventory"), reverse("place", args=[place.pk]), reverse("letter", args=[letter.pk]),
        reverse("letter-body", args=[letter.pk]), reverse("jobs"), reverse("audit"),
    ]
    for url in pages:
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith(reverse("login") + "?next="), url


def test_posting_an_action_without_signing_in_changes_nothing(client, place):
    letter = store_letter(place)
    response = client.post(reverse("action-preview", args=[place.pk]),
                           {"action": "purge", "reason": "x", "ids": [letter.pk]})
    assert response.status_code == 302 and response["Location"].startswith(reverse("login"))
    letter.refresh_from_db()
    assert letter.state == "held"


def test_sign_in_then_sign_out(client, operator):
    page = client.get(reverse("login"))
    assert b"Sign in" in page.content
    response = client.post(reverse("login"), {"username": "olga", "password": "triage-pass-123"})
    assert response.status_code == 302 and response["Location"] == reverse("inventory")
    assert client.get(reverse("inventory")).status_code == 200
    client.post(reverse("logout"))
    assert client.get(reverse("inventory")).status_code == 302


def test_a_wrong_password_is_refused(client, operator):
    response = client.post(reverse("login"), {"username": "olga", "password": "nope"})
    assert response.status_code == 200
    assert b"Please enter a correct username and password" in response.content
