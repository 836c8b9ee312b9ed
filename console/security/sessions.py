"""Sessions bounded by the identity provider: a console session begun through the provider
lasts DLO_OIDC_SESSION_SECONDS (0: the ID token's own lifetime, at least
:data:`LEAST_SECONDS`), then the provider is asked again before the next page.

The renewal is silent (``prompt=none``, console.security.oidc) while the person's session at the
provider lives, and goes through the sign-in again otherwise; either way the mapping is applied
again, so a group removed at the provider takes the role away within one session lifetime, and
someone removed there is signed out of the console.

A page (GET) past its time is sent to the renewal and comes back to where it was; an htmx
request is told to go there (``HX-Redirect``); any other request (a form's POST, the API with
this session) answers 401, saying the session must be renewed: nothing is done on a session
whose right is not known.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode, urlsplit

from django.conf import settings
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.urls import reverse

LEAST_SECONDS = 15 * 60
#: When the session's time with the provider is up (seconds since the epoch).
UNTIL = "dlo_oidc_until"


def bound(request: HttpRequest, claims: dict[str, Any]) -> None:
    """Start the session's time with the provider, from the ID token's ``claims``."""
    seconds = settings.DLO_OIDC_SESSION_SECONDS
    if seconds <= 0:
        lifetime = _number(claims.get("exp")) - _number(claims.get("iat"))
        seconds = max(LEAST_SECONDS, int(lifetime)) if lifetime > 0 else LEAST_SECONDS
    request.session[UNTIL] = time.time() + seconds


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0


class ProviderBoundMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        until = request.session.get(UNTIL) if hasattr(request, "session") else None
        if until is None or time.time() < until or not request.user.is_authenticated:
            return self.get_response(request)
        if request.path.startswith(("/sign-in/", "/sign-out/", "/static/", "/healthz")):
            return self.get_response(request)
        wanted = request.headers.get("HX-Current-URL") or request.get_full_path()
        renew = reverse("oidc-start") + "?" + urlencode({"renew": "1", "next": _local(wanted)})
        if request.headers.get("HX-Request"):
            answer = HttpResponse(status=204)
            answer["HX-Redirect"] = renew
            return answer
        if request.method in ("GET", "HEAD") and not request.path.startswith("/api/"):
            return HttpResponseRedirect(renew)
        return JsonResponse({"detail": "your session with the identity provider must be renewed: open a page "
                                       "of the console to renew it"}, status=401)


def _local(url: str) -> str:
    """The path and query of ``url`` (htmx sends the page's whole URL); the start of the
    sign-in checks it is this console's again."""
    parts = urlsplit(url)
    path = parts.path if parts.path.startswith("/") and not parts.path.startswith("//") else "/"
    return path + (f"?{parts.query}" if parts.query else "")
