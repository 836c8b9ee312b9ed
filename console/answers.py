"""The answer to a refused request where no page to go back to is known, for the pages'
middleware (console.web.refusals) and the security middleware alike (console.security), which
both sit above it."""

from __future__ import annotations

from django.http import HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils.html import escape

from console.access.masking import current_redactor


def refused(request, why: str, status: int) -> HttpResponse:
    """The answer to a refused request, where no page to go back to is known: ``{"detail": why}``
    under /api/, a fragment for htmx (built here, not by a template, so masked for the reader
    as the loader masks a page: a reason may quote what someone typed), else a page."""
    if request.path_info.startswith("/api/"):
        return JsonResponse({"detail": why}, status=status)
    if getattr(request, "htmx", False):
        redactor = current_redactor()
        shown = why if redactor is None else redactor.string(why)
        return HttpResponse(f'<p class="error" role="alert">{escape(shown)}</p>', status=status)
    return render(request, "web/refused.html", {"why": why}, status=status)
