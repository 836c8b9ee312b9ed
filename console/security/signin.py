"""Sign-in rate limiting: too many failures for one user name, or from one address, lock
signing in for a while.

Failures are rows in PostgreSQL (console.models.SignInFailure), so every web process sees the
same counts and a restart forgets nothing. DLO_SIGNIN_MAX_FAILURES failures within
DLO_SIGNIN_LOCK_SECONDS lock the name (or the address) until DLO_SIGNIN_LOCK_SECONDS after the
last of them; attempts while locked are refused without checking the password and are not
counted, so the lock cannot be stretched for ever. A successful sign-in forgets the name's
failures.
"""

from __future__ import annotations

import logging
import math
from datetime import datetime, timedelta

from django import forms
from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.views import LoginView
from django.db.models import Max, Q
from django.utils import timezone

from console.models import SignInFailure

log = logging.getLogger(__name__)


def client_ip(request) -> str:
    """The address the request came from (REMOTE_ADDR: a proxy in front must set it right)."""
    return request.META.get("REMOTE_ADDR") or ""


def locked_until(username: str, ip: str, now: datetime | None = None) -> datetime | None:
    """When signing in as ``username`` from ``ip`` is allowed again, or None if it is now."""
    now = now or timezone.now()
    window = timedelta(seconds=settings.DLO_SIGNIN_LOCK_SECONDS)
    recent = SignInFailure.objects.filter(at__gt=now - window)
    limit = settings.DLO_SIGNIN_MAX_FAILURES
    counted = [Q(username__iexact=username)] if username else []
    if ip:
        counted.append(Q(ip=ip))
    ends = []
    for who in counted:
        rows = recent.filter(who)
        if rows.count() >= limit:
            ends.append(rows.aggregate(last=Max("at"))["last"] + window)
    return max(ends) if ends else None


def record_failure(username: str, ip: str) -> None:
    SignInFailure.objects.create(username=username[:150], ip=ip or None)


def forget_failures(username: str) -> None:
    """A successful sign-in: the name's earlier failures no longer count."""
    SignInFailure.objects.filter(username__iexact=username).delete()


class RateLimitedAuthenticationForm(AuthenticationForm):
    """Django's sign-in form, refusing (without checking the password) while locked."""

    error_messages = {
        **AuthenticationForm.error_messages,
        "locked": "Too many failed sign-ins for this account or from this address. "
                  "Try again in %(minutes)s minute%(plural)s.",
    }

    def clean(self):
        username = (self.data.get("username") or "").strip()
        ip = client_ip(self.request) if self.request else ""
        until = locked_until(username, ip)
        if until is not None:
            minutes = max(1, math.ceil((until - timezone.now()).total_seconds() / 60))
            log.warning("sign-in refused while locked: user %r from %s", username, ip)
            raise forms.ValidationError(self.error_messages["locked"], code="locked",
                                        params={"minutes": minutes, "plural": "s" if minutes > 1 else ""})
        try:
            cleaned = super().clean()
        except forms.ValidationError:
            record_failure(username, ip)
            raise
        forget_failures(username)
        return cleaned


class SignInView(LoginView):
    """The sign-in page, rate limited."""

    authentication_form = RateLimitedAuthenticationForm
    redirect_authenticated_user = True
