"""Every sign-in leaves an audit event with the address it came from: a success, a failure,
and the start of a lock. A success keeps the failures before it on record (it used to delete
them) and only stops them counting against its own name."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from console.models import AuditEvent, SignInFailure
from console.services.audit import verify_chain

pytestmark = pytest.mark.django_db

LOCKED = "Too many failed sign-ins"


def _sign_in(address: str, username: str, password: str):
    return Client(REMOTE_ADDR=address).post(reverse("login"), {"username": username, "password": password})


def _events(action: str):
    return list(AuditEvent.objects.filter(action=action).order_by("id")
                .values("actor_name", "target", "source_ip", "outcome"))


def test_a_success_is_audited_and_the_failures_before_it_stay_on_record(operator):
    for _ in range(2):
        _sign_in("198.51.100.3", "olga", "typo")
    assert _sign_in("198.51.100.4", "olga", "triage-pass-123").status_code == 302

    assert _events("sign-in.failed") == [
        {"actor_name": "anonymous", "target": "olga", "source_ip": "198.51.100.3", "outcome": "refused"}] * 2
    assert _events("sign-in.succeeded") == [
        {"actor_name": "olga", "target": "olga", "source_ip": "198.51.100.4", "outcome": "signed in"}]
    assert SignInFailure.objects.filter(username="olga").count() == 2
    assert verify_chain().ok


def test_a_failure_for_a_name_that_is_no_account_is_audited_without_the_name(operator):
    # Such a "name" is often a password typed into the wrong box: the audit cannot be erased.
    _sign_in("203.0.113.5", "triage-pass-123", "olga")
    event = AuditEvent.objects.get(action="sign-in.failed")
    assert (event.source_ip, event.target, event.details) == (
        "203.0.113.5", "", {"name": None, "known_account": False})
    assert "triage-pass-123" not in str(event.__dict__)


def test_the_lock_is_audited_once_when_it_starts(operator):
    for _ in range(5):
        _sign_in("203.0.113.7", "olga", "guess")
    assert LOCKED in _sign_in("203.0.113.7", "olga", "triage-pass-123").content.decode()
    assert LOCKED in _sign_in("203.0.113.8", "olga", "guess").content.decode()

    assert len(_events("sign-in.failed")) == 5  # the refusals while locked are not failures
    locks = AuditEvent.objects.filter(action="sign-in.locked")
    assert [(e.target, e.source_ip, e.outcome) for e in locks] == [("olga", "203.0.113.7", "locked")]
    assert "until" in locks[0].details
    assert not AuditEvent.objects.filter(action="sign-in.succeeded").exists()


def test_signing_in_to_ones_own_account_does_not_forgive_an_addresss_other_failures(operator, admin):
    # A sprayer with an account of their own cannot reset their address's count by using it.
    for name in ("root", "bob", "demo", "olga"):
        _sign_in("203.0.113.9", name, "password1")
    assert _sign_in("203.0.113.9", "ada", "admin-pass-123").status_code == 302
    _sign_in("203.0.113.9", "carol", "password1")
    assert LOCKED in _sign_in("203.0.113.9", "olga", "triage-pass-123").content.decode()
