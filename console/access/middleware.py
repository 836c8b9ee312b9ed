"""Apply the URL policy to every page (the REST API has console.access.api)."""

from __future__ import annotations

import logging

from django.contrib.auth.views import redirect_to_login
from django.http import Http404, HttpResponse
from django.shortcuts import render

from console.access import policy
from console.access.roles import has
from console.access.scope import allows_url

log = logging.getLogger(__name__)


def _is_api_view(view_func) -> bool:
    from rest_framework.views import APIView

    cls = getattr(view_func, "cls", None)
    return isinstance(cls, type) and issubclass(cls, APIView)


def forbidden(request, why: str) -> HttpResponse:
    """403: the full page, or for htmx just a fragment (htmx leaves the page as it was on an
    error status; the fragment is for whoever reads the answer)."""
    if getattr(request, "htmx", False):
        return HttpResponse(f'<p class="error" role="alert">{why}</p>', status=403)
    return render(request, "web/forbidden.html", {"why": why}, status=403)


class RoleMiddleware:
    """Every page needs the permission the policy table names for its URL name and method."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_view(self, request, view_func, view_args, view_kwargs):
        if _is_api_view(view_func):
            return None  # DRF authenticates tokens inside the view: console.access.api.RolePermission
        match = request.resolver_match
        try:
            needed = policy.required(match.url_name if match else None, request.method, request.POST)
        except policy.Unclassified:
            log.error("refused %s: its URL name is not in console.access.policy", request.path)
            return forbidden(request, "This address is not open to anyone yet.")
        if needed == [policy.PUBLIC]:
            return None
        if not request.user.is_authenticated:
            if getattr(request, "htmx", False):
                response = HttpResponse(status=401)
                response["HX-Redirect"] = redirect_to_login(request.get_full_path())["Location"]
                return response
            return redirect_to_login(request.get_full_path())
        if not all(has(request.user, codename) for codename in needed if codename != policy.SIGNED_IN):
            return forbidden(request, "Your role does not allow this.")
        if not allows_url(request.user, view_kwargs):
            raise Http404("outside your scope")
        return None
