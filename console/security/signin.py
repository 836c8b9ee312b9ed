"""Sign-in rate limiting and the sign-in audit.

Failures are rows in PostgreSQL (console.models.SignInFailure), so every web process sees the
same counts and a restart forgets nothing. DLO_SIGNIN_MAX_FAILURES failures within
DLO_SIGNIN_LOCK_SECONDS lock the name (or the address) until DLO_SIGNIN_LOCK_SECONDS after the
last of them; attempts while locked are refused without checking the password and are not
counted, so the lock cannot be stretched for ever.

Names are counted the way Django signs them in: NFKC-normalised (AbstractBaseUser's
``normalize_username``), then case-folded, so ``ｏｌｇａ`` and ``OLGA`` count against ``olga``.

Every success, failure and lock start is an audit event with the source address. A success
deletes nothing: the audit's ``sign-in.succeeded`` events are the record of it, and a failure
counts (for its name, and for its address) only if no success for its name came after it.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterable
from datetime import datetime, timedelta

from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.models import User
from django.contrib.auth.views import LoginView
from django.db import transaction
from django.http import Http404
from django.utils import timezone

from console.models import AuditEvent, SignInFailure
from console.security import provider
from console.services import audit

log = logging.getLogger(__name__)

SUCCEEDED, FAILED, LOCKED = "sign-in.succeeded", "sign-in.failed", "sign-in.locked"
#: Who a refused sign-in is audited as: nobody has proved who they are.
ANONYMOUS = "anonymous"


def client_ip(request) -> str:
    """The address the request came from (REMOTE_ADDR: a proxy in front must set it right)."""
    return request.META.get("REMOTE_ADDR") or ""


def normalised_name(typed: str) -> str:
    """The name as the lockout counts it: Django's NFKC normalisation plus case-folding, so no
    spelling that signs in as (or case-insensitively like) an account gets attempts of its own."""
    return AbstractBaseUser.normalize_username(typed.strip()).casefold()


def account_named(name: str) -> AbstractBaseUser | None:
    """The account whose normalised name is ``name``, if there is one."""
    User = get_user_model()
    candidates = User.objects.filter(**{f"{User.USERNAME_FIELD}__iexact": name})
    return next((user for user in candidates if normalised_name(user.get_username()) == name), None)


def _counted(failures: Iterable[tuple[str, datetime]], since: datetime) -> list[datetime]:
    """When the given (name, at) failures happened, leaving out each one that a later
    successful sign-in for its name forgave."""
    failures = list(failures)
    last_success: dict[str, datetime] = {}
    successes = AuditEvent.objects.filter(action=SUCCEEDED, at__gt=since,
                                          details__name__in={name for name, _ in failures})
    for name, at in successes.values_list("details__name", "at"):
        last_success[name] = max(at, last_success.get(name, at))
    return [at for name, at in failures if name not in last_success or at > last_success[name]]


def locked_until(name: str, ip: str, now: datetime | None = None) -> datetime | None:
    """When signing in as the normalised ``name`` from ``ip`` is allowed again, or None if it is now."""
    now = now or timezone.now()
    window = timedelta(seconds=settings.DLO_SIGNIN_LOCK_SECONDS)
    recent = SignInFailure.objects.filter(at__gt=now - window)
    groups = [recent.filter(username=name)] if name else []
    if ip:
        groups.append(recent.filter(ip=ip))
    ends = []
    for rows in groups:
        counted = _counted(rows.values_list("username", "at"), now - window)
        if len(counted) >= settings.DLO_SIGNIN_MAX_FAILURES:
            ends.append(max(counted) + window)
    return max(ends) if ends else None


def _name_for_audit(name: str) -> tuple[str, dict]:
    """(target, details) of a sign-in event. A name that is no account's is not kept: it is
    often a password typed into the wrong field, and the audit can never be erased."""
    account = account_named(name) if name else None
    if account is None:
        return "", {"name": None, "known_account": False}
    return account.get_username(), {"name": name, "known_account": True}


@transaction.atomic
def record_failure(typed: str, ip: str, why: str = "") -> None:
    """Count a failed sign-in and audit it (``why``, if given: why it was refused); audit the lock
    too if this failure starts one."""
    name = normalised_name(typed)
    SignInFailure.objects.create(username=name[:150], ip=ip or None)
    target, details = _name_for_audit(name)
    audit.record(FAILED, actor=ANONYMOUS, target=target, outcome="refused",
                 details={**details, "why": why} if why else details)
    until = locked_until(name, ip)
    if until is not None:  # attempts while locked never get here: this one started the lock
        audit.record(LOCKED, actor=ANONYMOUS, target=target, outcome="locked",
                     details={**details, "until": until.isoformat()})


@transaction.atomic
def record_success(user: User) -> None:
    """Audit a successful sign-in; from now on the name's earlier failures no longer count."""
    name = normalised_name(user.get_username())
    audit.record(SUCCEEDED, actor=user, target=user.get_username(), outcome="signed in",
                 details={"name": name, "known_account": True})


class RateLimitedAuthenticationForm(AuthenticationForm):
    """Django's sign-in form, refusing (without checking the password) while locked."""

    error_messages = {
        **AuthenticationForm.error_messages,
        "locked": "Too many failed sign-ins for this account or from this address. "
                  "Try again in %(minutes)s minute%(plural)s.",
    }

    def clean(self):
        typed = self.data.get("username") or ""
        ip = client_ip(self.request) if self.request else ""
        until = locked_until(normalised_name(typed), ip)
        if until is not None:
            # Not audited one by one: whoever hammers a locked name would fill the append-only
            # audit at will. The lock's start is audited, with when it ends.
            minutes = max(1, math.ceil((until - timezone.now()).total_seconds() / 60))
            log.warning("sign-in refused while locked: user %r from %s", typed[:150], ip)
            raise forms.ValidationError(self.error_messages["locked"], code="locked",
                                        params={"minutes": minutes, "plural": "s" if minutes > 1 else ""})
        try:
            return super().clean()
        except forms.ValidationError:
            record_failure(typed, ip)
            raise


def provider_enabled() -> bool:
    """Whether the console signs people in through an identity provider (console.security.oidc)."""
    return bool(settings.DLO_OIDC_ISSUER and settings.DLO_OIDC_CLIENT_ID)


def passwords_off() -> bool:
    """DLO_OIDC_ONLY with a provider configured: no password form (but break-glass's)."""
    return provider_enabled() and settings.DLO_OIDC_ONLY


def sign_in_context() -> dict:
    """What the sign-in page needs to offer the provider, and whether to show the password form;
    while the provider is known to be away (console.security.provider, not asked here), it says
    so and points to the break-glass sign-in where there is one."""
    if not provider_enabled():
        return {"provider": "", "passwords_off": False}
    seen = provider.health()
    return {"provider": settings.DLO_OIDC_NAME, "passwords_off": passwords_off(),
            "provider_away": seen["state"] == "away",
            "break_glass_offered": passwords_off() and bool(settings.DLO_BREAK_GLASS_USERS)}


class SignInView(LoginView):
    """The sign-in page, rate limited and audited; with DLO_OIDC_ONLY, only the provider's button,
    and a POST of the password form is refused (audited)."""

    authentication_form = RateLimitedAuthenticationForm
    redirect_authenticated_user = True

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), **sign_in_context()}

    def post(self, request, *args, **kwargs):
        if passwords_off():
            # Counted and audited as a failed sign-in, so that hammering it locks and then stops
            # being audited one by one, as for wrong passwords.
            typed, ip = (request.POST.get("username") or "")[:150], client_ip(request)
            if locked_until(normalised_name(typed), ip) is None:
                record_failure(typed, ip, why="passwords are off (DLO_OIDC_ONLY)")
            return self.render_to_response({**self.get_context_data(),
                                            "provider_error": "Passwords are off: sign in with the provider."},
                                           status=403)
        return super().post(request, *args, **kwargs)

    def form_valid(self, form):
        with transaction.atomic():
            response = super().form_valid(form)
            record_success(form.get_user())
        return response


BREAK_GLASS = "sign-in.break-glass"


class BreakGlassSignInView(SignInView):
    """With passwords off, the password form for the accounts of DLO_BREAK_GLASS_USERS alone (the
    bootstrap admin, for when the provider is down or misconfigured): rate limited like the
    other, and each use audited as ``sign-in.break-glass`` besides ``sign-in.succeeded``. Any other
    account is refused as a failed sign-in. Not there (404) unless passwords are off and some
    account is named."""

    extra_context = {"break_glass": True}

    def dispatch(self, request, *args, **kwargs):
        if not (passwords_off() and settings.DLO_BREAK_GLASS_USERS):
            raise Http404("no break-glass sign-in")
        return super().dispatch(request, *args, **kwargs)

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "passwords_off": False}

    def post(self, request, *args, **kwargs):
        return LoginView.post(self, request, *args, **kwargs)

    def form_valid(self, form):
        user = form.get_user()
        if user.get_username() not in settings.DLO_BREAK_GLASS_USERS:
            record_failure(user.get_username(), client_ip(self.request))
            form.add_error(None, "This account signs in through the identity provider.")
            return self.form_invalid(form)
        with transaction.atomic():
            response = super().form_valid(form)
            audit.record(BREAK_GLASS, actor=user, target=user.get_username(), outcome="signed in",
                         details={"name": normalised_name(user.get_username())})
        return response
