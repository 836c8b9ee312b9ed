"""Refuse, at the door, a path, query string or form that carries what PostgreSQL cannot store.

A NUL character (``%00``) or an unpaired surrogate in a URL or a form field reaches views as
ordinary text, and the first query that compares a column with it fails in the database: a
fingerprint ``a%00b`` in ``/api/groups/<fingerprint>/``, ``?owner=a%00b``, ``?origin=...``
each used to be a 500. Checked here, once, before any view (or the permission checks that read
the URL), for every page and API operation, including those written later; JSON bodies are the
API's JSON parser's to check (console.api.parsers), as it reads them.

The answer is a 400 saying why: ``{"detail": ...}`` under /api/, a fragment for htmx, else a page.
"""

from __future__ import annotations

import re

from django.http import QueryDict

from console.answers import refused
from console.services.parsing import InputRefused, unstorable_text

#: Bodies of these types are forms, parsed into request.POST.
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,50}")


def _problem(request) -> str:
    """What in the request PostgreSQL could not hold, or ""."""
    if problem := unstorable_text(request.path_info):
        return f"the address {problem}"
    for where, values in (("query string", request.GET), ("form", _form(request))):
        for key, items in values.lists():
            for text in (key, *items):
                if isinstance(text, str) and (problem := unstorable_text(text)):
                    return f"the {where} ({_printable(key)}) {problem}"
    return ""


def _form(request):
    if request.method in ("POST", "PUT", "PATCH") and request.content_type in FORM_TYPES:
        return request.POST
    return QueryDict()


def _printable(key: str) -> str:
    """The parameter's name when it is a plain one (the answer echoes no text it was sent)."""
    return key if _NAME.fullmatch(key) else "a parameter"


class UnstorableInputMiddleware:
    """A 400 for a NUL or an unpaired surrogate in the path, the query string or a form."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        problem = _problem(request)
        if not problem:
            return self.get_response(request)
        return refused(request, f"Refused: {problem}.", InputRefused.status)
