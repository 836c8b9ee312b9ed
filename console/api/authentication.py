"""The API's authentication by the identity provider's access tokens (``Authorization: Bearer``),
beside Django's session and DRF's own tokens (``Authorization: Token``), which keep working.

A token the API accepts (console.security.access_tokens: signature, issuer, audience, times)
signs the request in as the user of its ``(issuer, sub)``, whose role and limits its groups
claim gives through the mapping, applied at every request (console.services.claims), so a
script removed from a group at the provider loses what it gave with its next token. Refusals
answer 401 with ``WWW-Authenticate: Bearer error="invalid_token"`` (RFC 6750) and are audited;
a valid token whose groups the mapping does not know answers 403.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header

from console.security import access_tokens, provider
from console.services.claims import ClaimsRefused, access_from_claims
from console.services.provider_tokens import record_refused_token

log = logging.getLogger(__name__)

KEYWORD = b"bearer"


class InvalidBearerToken(exceptions.APIException):
    """401 with the reason (DRF's AuthenticationFailed would turn into a 403 here, since the
    first authentication class, the session's, names no WWW-Authenticate challenge)."""

    status_code = 401
    default_code = "invalid_token"

    def __init__(self, reason: str) -> None:
        super().__init__(detail=f"The access token was refused: {reason}.")
        # No quotes or backslashes in a reason: it is the console's own text, never the token's.
        self.auth_header = f'Bearer realm="api", error="invalid_token", error_description="{reason}"'


class ProviderUnavailable(exceptions.APIException):
    """503 with ``Retry-After``: DRF's handler sends ``wait`` as that header."""

    status_code = 503
    default_code = "provider_unavailable"
    default_detail = "The identity provider could not be reached to check the access token; try again."

    def __init__(self, wait: int) -> None:
        super().__init__(f"The identity provider could not be reached to check the access token; "
                         f"try again in {wait} s.")
        self.wait = wait


class NoRoleFromClaims(exceptions.PermissionDenied):
    default_detail = "The access token is valid, but its groups give no role in the console."


@dataclass(frozen=True)
class ProviderToken:
    """``request.auth`` for a provider's token: who vouched and what they said (never the token)."""

    issuer: str
    subject: str
    groups: tuple[str, ...]
    role: str
    #: The token's OAuth scopes (its ``scope`` claim): ``mcp:act`` lets an agent act through MCP.
    scopes: tuple[str, ...] = ()


class ProviderTokenAuthentication(BaseAuthentication):
    """``Authorization: Bearer <JWT>`` from DLO_OIDC_ISSUER for DLO_OIDC_API_AUDIENCE."""

    def authenticate(self, request) -> tuple[Any, ProviderToken] | None:
        parts = get_authorization_header(request).split()
        if not parts or parts[0].lower() != KEYWORD:
            return None
        issuer = settings.DLO_OIDC_ISSUER
        if not access_tokens.enabled():
            raise InvalidBearerToken("this console accepts no identity provider's tokens "
                                     "(DLO_OIDC_ISSUER and DLO_OIDC_API_AUDIENCE are not both set)")
        try:
            if len(parts) != 2:
                raise access_tokens.TokenRefused("the Authorization header must be 'Bearer' and one token")
            try:
                token = parts[1].decode("ascii")
            except UnicodeDecodeError:
                raise access_tokens.TokenRefused("the bearer token is not a well-formed JWT") from None
            claims = access_tokens.validate(token)
        except access_tokens.TokenRefused as refusal:
            record_refused_token(issuer=issuer, reason=refusal.reason, subject=refusal.subject)
            raise InvalidBearerToken(refusal.reason) from None
        except provider.Unreachable as exc:
            log.warning("an access token could not be checked: %s", exc)  # the provider's URL, no token
            raise ProviderUnavailable(exc.retry_after) from None
        try:
            access = access_from_claims(claims, issuer=issuer, via="token")
        except ClaimsRefused as refusal:
            record_refused_token(issuer=issuer, reason=str(refusal), subject=claims["sub"])
            raise exceptions.PermissionDenied(f"The access token was refused: {refusal}.") from None
        if access.user is None:
            record_refused_token(issuer=issuer, reason="its groups give no role", subject=claims["sub"])
            raise NoRoleFromClaims()
        scope = claims.get("scope")
        scopes = tuple(scope.split()) if isinstance(scope, str) else ()
        return access.user, ProviderToken(issuer, claims["sub"], tuple(access.groups), access.role, scopes)

    def authenticate_header(self, request) -> str:
        return 'Bearer realm="api"'


class ProviderTokenScheme(OpenApiAuthenticationExtension):
    """The OpenAPI schema's name for it: an HTTP bearer scheme carrying a JWT."""

    target_class = ProviderTokenAuthentication
    name = "providerToken"

    def get_security_definition(self, auto_schema) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "bearerFormat": "JWT",
                "description": "An access token of the identity provider (DLO_OIDC_ISSUER) for DLO_OIDC_API_AUDIENCE"}
