"""Signing in through the company's identity provider: OpenID Connect, authorization code flow
with PKCE (S256), through Authlib's Django client.

What Authlib does here, given the discovery document console.security.provider keeps (so a
provider that is away is told at once): ``state`` kept in the session and checked on return,
the PKCE verifier, the ``nonce``, the code exchanged at the token endpoint, and the ID token
validated (signature by the provider's JWKS, re-read once for an unknown key id; ``iss`` equal
to the discovered issuer, ``aud`` holding our client id, ``exp``/``iat`` with
DLO_OIDC_LEEWAY_SECONDS of clock skew, the nonce). What this module adds: the discovered issuer
must be the configured one (OpenID Connect Discovery 1.0, 4.3; checked by the provider module),
roles and limits from the groups claim (console.services.claims), and the audit of every
sign-in, refusal and sign-out with the provider, the subject and the groups that decided,
never a token.

Sign-out ends the console's session, then, when the provider announces an
``end_session_endpoint``, sends the browser there (RP-initiated logout) with the ID token as
``id_token_hint``, to come back to the sign-in page. That last step is a page that navigates by
``<meta http-equiv="refresh">``: the Content Security Policy's ``form-action 'self'`` would stop
the sign-out form's POST from being redirected to another origin.
"""

from __future__ import annotations

import logging
import time
from typing import Any
from urllib.parse import quote

from authlib.integrations.base_client import OAuthError
from authlib.integrations.django_client import OAuth
from django.conf import settings
from django.contrib.auth import login, logout
from django.db import transaction
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST
from joserfc.errors import JoseError

from console.access.claims import groups_in
from console.security import logout as logouts
from console.security import provider, sessions
from console.security.signin import (
    ANONYMOUS,
    SUCCEEDED,
    RateLimitedAuthenticationForm,
    provider_enabled,
    sign_in_context,
)
from console.services import audit
from console.services.claims import ClaimsRefused, access_from_claims

log = logging.getLogger(__name__)

REFUSED, SIGNED_OUT, RENEWED = "sign-in.refused", "sign-out", "sign-in.renewed"
#: Where the session keeps what sign-out needs, where to go after signing in, and whether this
#: sign-in renews a session (console.security.sessions).
_ID_TOKEN, _PROVIDER, _NEXT, _RENEWING = "dlo_oidc_id_token", "dlo_oidc_issuer", "dlo_oidc_next", "dlo_oidc_renewing"
#: A silent renewal's answers that mean: the person must sign in at the provider again.
_SIGN_IN_AGAIN = {"login_required", "interaction_required", "consent_required", "account_selection_required"}
_clients: dict[tuple, Any] = {}


def client():
    """Authlib's client for the configured provider, one per configuration (metadata and JWKS
    are cached on it)."""
    key = (settings.DLO_OIDC_ISSUER, settings.DLO_OIDC_CLIENT_ID, settings.DLO_OIDC_CLIENT_SECRET,
           tuple(settings.DLO_OIDC_SCOPES))
    if key not in _clients:
        oauth = OAuth()
        _clients[key] = oauth.register(
            "provider", client_id=settings.DLO_OIDC_CLIENT_ID, client_secret=settings.DLO_OIDC_CLIENT_SECRET or None,
            server_metadata_url=f"{settings.DLO_OIDC_ISSUER}/.well-known/openid-configuration",
            client_kwargs={"scope": " ".join(settings.DLO_OIDC_SCOPES), "code_challenge_method": "S256",
                           "timeout": 10,
                           # A public client (no secret) authenticates by PKCE alone.
                           **({} if settings.DLO_OIDC_CLIENT_SECRET else {"token_endpoint_auth_method": "none"})})
    return _clients[key]


def _metadata() -> dict:
    """The provider's discovery document as console.security.provider keeps it (checked to be the
    configured issuer's; Unreachable at once while the provider is away), handed to Authlib's
    client so that it reads nothing itself."""
    metadata = provider.metadata()
    app = client()
    app.server_metadata.update({**metadata, "_loaded_at": time.time()})
    return app.server_metadata


@require_GET
def start(request: HttpRequest) -> HttpResponse:
    """Send the browser to the provider's sign-in page (state, nonce and PKCE kept in the session)."""
    if not provider_enabled():
        raise Http404("no identity provider is configured")
    wanted = request.GET.get("next", "")
    request.session[_NEXT] = wanted if url_has_allowed_host_and_scheme(
        wanted, allowed_hosts={request.get_host()}, require_https=request.is_secure()) else ""
    # A session whose time with the provider is up (console.security.sessions) asks silently.
    renewing = (request.GET.get("renew") == "1" and request.user.is_authenticated
                and bool(request.session.get(_PROVIDER)))
    request.session[_RENEWING] = renewing
    try:
        _metadata()
        return client().authorize_redirect(request, request.build_absolute_uri(reverse("oidc-callback")),
                                           **({"prompt": "none"} if renewing else {}))
    except provider.Unreachable as exc:
        return _refused(request, f"{settings.DLO_OIDC_NAME} cannot be used just now ({exc}); "
                                 f"try again in {exc.retry_after} s", begun=False, status=503)
    except (OAuthError, OSError, ValueError) as exc:
        return _refused(request, f"the identity provider cannot be reached: {_why(exc)}", begun=False, status=502)


@require_GET
def callback(request: HttpRequest) -> HttpResponse:
    """The provider's answer: exchange the code, validate the ID token, apply the mapping, sign in."""
    if not provider_enabled():
        raise Http404("no identity provider is configured")
    issuer = settings.DLO_OIDC_ISSUER
    # Whether this browser began a sign-in (Authlib keeps each one's state under this prefix).
    begun = any(key.startswith("_state_provider_") for key in request.session.keys())
    renewing = bool(request.session.pop(_RENEWING, False))
    try:
        _metadata()
        if not request.GET.get("state") or client().framework.get_state_data(request.session,
                                                                            request.GET["state"]) is None:
            raise OAuthError(error="state_mismatch", description="this answer belongs to no sign-in begun here")
        token = client().authorize_access_token(request, leeway=settings.DLO_OIDC_LEEWAY_SECONDS)
        claims = dict(token.get("userinfo") or {})
        if not claims:
            raise OAuthError(error="no_id_token", description="the provider sent no ID token")
    except (OAuthError, JoseError, OSError, ValueError, provider.Unreachable) as exc:
        if renewing and isinstance(exc, OAuthError) and exc.error in _SIGN_IN_AGAIN:
            return _renewal_ended(request)
        return _refused(request, f"the identity provider's answer was refused: {_why(exc)}", begun=begun,
                        renewing=renewing)
    subject = str(claims.get("sub", ""))
    try:
        access = access_from_claims(claims, issuer=issuer, via="sign-in")
    except ClaimsRefused as exc:
        return _refused(request, str(exc), begun=True, subject=subject, groups=groups_in(claims), status=403,
                        renewing=renewing)
    if access.user is None or not access.role:
        return _refused(request, "no group of yours at the identity provider gives a role in this console",
                        begun=True, subject=subject, groups=groups_in(claims), status=403, renewing=renewing)
    with transaction.atomic():
        login(request, access.user, backend="django.contrib.auth.backends.ModelBackend")
        audit.record(RENEWED if renewing else SUCCEEDED, actor=access.user, target=access.user.get_username(),
                     outcome="renewed" if renewing else "signed in",
                     details={"name": access.user.get_username().casefold(), "known_account": True,
                              "provider": issuer, "subject": subject, "groups": access.groups,
                              "mappings": access.mappings, "role": access.role, "limits": access.limits})
    request.session[_ID_TOKEN] = token.get("id_token", "")
    request.session[_PROVIDER] = issuer
    sid = claims.get("sid")
    logouts.remember(request, access.user, subject=subject, sid=sid if isinstance(sid, str) else "")
    sessions.bound(request, claims)
    wanted = request.session.pop(_NEXT, "")
    return HttpResponseRedirect(wanted or reverse(settings.LOGIN_REDIRECT_URL))


@require_POST
def sign_out(request: HttpRequest) -> HttpResponse:
    """End the console's session (audited); then the provider's, if the person signed in there."""
    id_token, issuer = request.session.get(_ID_TOKEN, ""), request.session.get(_PROVIDER, "")
    user = request.user if request.user.is_authenticated else None
    with transaction.atomic():
        if user is not None:
            audit.record(SIGNED_OUT, actor=user, target=user.get_username(), outcome="signed out",
                         details={"provider": issuer or None})
        logout(request)
    if not (issuer and provider_enabled() and issuer == settings.DLO_OIDC_ISSUER):
        return HttpResponseRedirect(reverse(settings.LOGOUT_REDIRECT_URL))
    try:
        end_session = _metadata().get("end_session_endpoint")
        if not end_session:
            return HttpResponseRedirect(reverse(settings.LOGOUT_REDIRECT_URL))
        url = client().create_logout_url(post_logout_redirect_uri=request.build_absolute_uri(reverse("login")),
                                         id_token_hint=id_token or None, client_id=settings.DLO_OIDC_CLIENT_ID)["url"]
    except (OAuthError, OSError, ValueError, provider.Unreachable) as exc:
        log.warning("signed out of the console, not of the identity provider: %s", _why(exc))
        return HttpResponseRedirect(reverse(settings.LOGOUT_REDIRECT_URL))
    return render(request, "registration/signed_out.html", {"provider_logout_url": url,
                                                             "provider": settings.DLO_OIDC_NAME})


def _renewal_ended(request: HttpRequest) -> HttpResponse:
    """The provider's session is over (``login_required`` to a silent renewal): the console's
    ends too (audited), and the person signs in again."""
    user = request.user
    wanted = request.session.get(_NEXT, "")
    with transaction.atomic():
        if user.is_authenticated:
            audit.record(SIGNED_OUT, actor=user, target=user.get_username(), outcome="signed out",
                         details={"provider": settings.DLO_OIDC_ISSUER, "why": "the provider's session ended"})
        logout(request)
    return HttpResponseRedirect(reverse("login") + (f"?next={quote(wanted)}" if wanted else ""))


def _refused(request: HttpRequest, why: str, *, begun: bool, subject: str = "", groups: list[str] | None = None,
             status: int = 400, renewing: bool = False) -> HttpResponse:
    """Audit a refused sign-in through the provider and say why on the sign-in page. An answer
    that belongs to no sign-in begun in this browser is only logged: anyone may send those, and
    the audit, which is never erased, would be theirs to fill. A refused renewal ends the
    session it would have renewed."""
    if begun:
        with transaction.atomic():
            audit.record(REFUSED, actor=ANONYMOUS, outcome="refused",
                         details={"provider": settings.DLO_OIDC_ISSUER, "subject": subject or None,
                                  "groups": groups or [], "why": why})
            if renewing:
                logout(request)
    else:
        log.warning("refused an answer from the identity provider to no sign-in begun here: %s", why)
    return render(request, "registration/login.html", {"provider_error": why, "form": RateLimitedAuthenticationForm(),
                                                       **sign_in_context()}, status=status)


def _why(exc: Exception) -> str:
    """What went wrong, in words that hold no token (Authlib's errors carry codes and descriptions)."""
    if isinstance(exc, OAuthError):
        return exc.error + (f": {exc.description}" if exc.description else "")
    if isinstance(exc, JoseError):
        return f"the ID token is not valid ({exc.error})"
    if isinstance(exc, provider.Unreachable):
        return str(exc)
    return exc.__class__.__name__

