"""Whose an agent's credentials are: the account the API's own authentication finds for an
``Authorization`` header (a DRF token, or the identity provider's bearer token with the role
and limits the groups mapping gives), for the rows the console audits of an agent's session."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from rest_framework.exceptions import APIException
from rest_framework.request import Request
from rest_framework.settings import api_settings


def account_of(authorization: str) -> Any:
    """The user the API would answer ``authorization`` as, or None."""
    http = HttpRequest()
    http.META["HTTP_AUTHORIZATION"] = authorization
    request = Request(http)
    authenticators: Any = api_settings.DEFAULT_AUTHENTICATION_CLASSES  # classes, once DRF has imported them
    for authenticator in authenticators:
        try:
            found = authenticator().authenticate(request)
        except APIException:
            return None
        if found is not None:
            return found[0]
    return None
