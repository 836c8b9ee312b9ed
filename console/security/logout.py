"""The provider's sign-out reaching every console session: OpenID Connect Back-Channel Logout
1.0, and Front-Channel Logout 1.0 where the browser still sends the console's cookie.

Each console session begun through the provider is remembered with the provider's subject and
session id (``ProviderSession``, written by console.security.oidc at sign-in).

``POST /sign-in/provider/backchannel-logout/`` takes ``logout_token``: a JWT the provider signs,
checked as the API's tokens are (console.security.access_tokens.verified: the provider's key,
``iss`` the configured issuer, ``aud`` the console's client id, ``iat``, times with the
leeway), which carries the back-channel logout event in ``events``, a ``sid`` or a ``sub``, and
no ``nonce`` (section 2.6). Every console session of that subject, and every one of that
provider session, ends; answered 200, ``Cache-Control: no-store``. A refused token answers 400
``{"error": "invalid_request", "error_description": why}``; refusals and sign-outs are both
audited (the provider's word, and what was sent in its name).

``GET /sign-in/provider/frontchannel-logout/?iss=...&sid=...`` (the provider's iframe) ends this
browser's session when it is that provider session: nothing else, since nothing is signed.
"""

from __future__ import annotations

import logging
from collections import Counter

from django.conf import settings
from django.contrib.auth import logout
from django.contrib.auth.models import User
from django.contrib.sessions.models import Session
from django.db import transaction
from django.db.models import Q
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.cache import patch_cache_control
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST

from console.models import ProviderSession
from console.security import access_tokens, provider
from console.security.signin import ANONYMOUS, provider_enabled
from console.services import audit

log = logging.getLogger(__name__)

BACK_CHANNEL = "sign-out.back-channel"
REFUSED = "sign-out.back-channel.refused"
EVENT = "http://schemas.openid.net/event/backchannel-logout"


def remember(request: HttpRequest, user: User, *, subject: str, sid: str) -> None:
    """The session this request now holds was begun through the provider by ``user``, as
    ``subject``, in the provider's session ``sid`` (the ID token's, "" when it sends none)."""
    if request.session.session_key is None:
        request.session.save()
    ProviderSession.objects.update_or_create(
        session_id=request.session.session_key,
        defaults={"user": user, "issuer": settings.DLO_OIDC_ISSUER, "subject": subject, "sid": sid})


@csrf_exempt  # the provider posts it, server to server: the signed token is the proof
@require_POST
def back_channel(request: HttpRequest) -> HttpResponse:
    if not provider_enabled():
        return _refused("no identity provider is configured", status=404, record=False)
    token = request.POST.get("logout_token", "")
    if not token:
        return _refused("logout_token is missing")
    try:
        claims = access_tokens.verified(token, audience=settings.DLO_OIDC_CLIENT_ID, required=("iss", "aud", "iat"),
                                        meant_for="this console (aud lacks DLO_OIDC_CLIENT_ID)")
    except access_tokens.TokenRefused as refusal:
        return _refused(f"the logout token was refused: {refusal.reason}")
    except provider.Unreachable as exc:
        answer = JsonResponse({"error": "temporarily_unavailable", "error_description": str(exc)}, status=503)
        answer["Retry-After"] = str(exc.retry_after)
        return answer
    events = claims.get("events")
    subject, sid = (value if isinstance(value := claims.get(name), str) else "" for name in ("sub", "sid"))
    if not isinstance(events, dict) or EVENT not in events:
        return _refused("the logout token carries no back-channel logout event")
    if "nonce" in claims:
        return _refused("a logout token carries no nonce")
    if not subject and not sid:
        return _refused("the logout token names neither a subject (sub) nor a session (sid)")
    ended = end_sessions(subject=subject, sid=sid)
    log.info("the identity provider signed out %s session(s) of one subject", ended)
    return _not_kept(HttpResponse(status=200))


def end_sessions(*, subject: str, sid: str) -> int:
    """End every console session of ``subject`` or of the provider session ``sid`` (audited,
    one event per person); how many ended."""
    issuer = settings.DLO_OIDC_ISSUER
    matching = Q(pk__in=[])
    if subject:
        matching |= Q(subject=subject)
    if sid:
        matching |= Q(sid=sid)
    with transaction.atomic():
        rows = list(ProviderSession.objects.select_related("user").filter(matching, issuer=issuer))
        Session.objects.filter(session_key__in=[row.session_id for row in rows]).delete()  # theirs go too
        for user, sessions in Counter(row.user for row in rows).items():
            audit.record(BACK_CHANNEL, actor=user, target=user.get_username(), outcome="signed out",
                         details={"provider": issuer, "subject": subject or None, "sid": sid or None,
                                  "sessions": sessions})
    return len(rows)


@require_GET
def front_channel(request: HttpRequest) -> HttpResponse:
    """End this browser's session when it is the provider session named (``iss`` and ``sid``)."""
    key = request.session.session_key
    row = ProviderSession.objects.filter(session_id=key).first() if key else None
    if (row is not None and request.GET.get("iss", "").rstrip("/") == row.issuer.rstrip("/")
            and request.GET.get("sid") and request.GET.get("sid") == row.sid):
        user = row.user
        with transaction.atomic():
            audit.record(BACK_CHANNEL, actor=user, target=user.get_username(), outcome="signed out",
                         details={"provider": row.issuer, "sid": row.sid, "sessions": 1, "channel": "front"})
            logout(request)
    return _not_kept(HttpResponse(status=200))


def _refused(why: str, *, status: int = 400, record: bool = True) -> HttpResponse:
    if record:
        with transaction.atomic():
            audit.record(REFUSED, actor=ANONYMOUS, outcome="refused",
                         details={"provider": settings.DLO_OIDC_ISSUER, "why": why})
    return _not_kept(JsonResponse({"error": "invalid_request", "error_description": why}, status=status))


def _not_kept(response: HttpResponse) -> HttpResponse:
    """No cache may keep a logout's answer (section 2.8)."""
    patch_cache_control(response, no_store=True)
    return response
