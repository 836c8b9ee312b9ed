"""Whose an agent's credentials are: the account the API's own authentication finds for an
``Authorization`` header (a DRF token, or the identity provider's bearer token with the role
and limits the groups mapping gives), for the rows the console audits of an agent's session."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from rest_framework.exceptions import APIException
from rest_framework.request import Request
from rest_framework.settings import api_settings

from console.models import AgentGrant


def account_of(authorization: str) -> Any:
    """The user the API would answer ``authorization`` as, or None."""
    found = _authenticated(authorization)
    return None if found is None else found[0]


def may_act(authorization: str) -> bool:
    """Whether the credentials carry the ``mcp:act`` scope: a DRF token made with it (the tokens
    page, console.models.AgentGrant), or the identity provider's token whose ``scope`` claim
    names it."""
    found = _authenticated(authorization)
    if found is None:
        return False
    _, auth = found
    scopes = getattr(auth, "scopes", None)  # the provider's token (console.api.authentication.ProviderToken)
    if scopes is not None:
        return "mcp:act" in scopes
    key = getattr(auth, "key", None)
    return bool(key) and AgentGrant.objects.filter(token_id=key, act=True).exists()


def _authenticated(authorization: str) -> tuple[Any, Any] | None:
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
            return found
    return None
