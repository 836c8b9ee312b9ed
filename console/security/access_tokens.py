"""The identity provider's access tokens (JWT, RFC 9068), as scripts send them to the API.

A token is accepted only when all of these hold, checked by PyJWT (a maintained library: the
same checks as Authlib's, a smaller dependency, and its PyJWKClient caches the key set and
refetches it, at most every 30 s, when a token names a key it does not know, which is how a
provider's key rotation reaches us):

1. Its header names an algorithm of :data:`ALGORITHMS` (asymmetric only: never ``none``, never
   an HS* algorithm, which would let whoever holds the public key sign), and a key (``kid``)
   of the provider's key set, found through discovery of ``DLO_OIDC_ISSUER``.
2. The signature verifies with that key, for that key's own algorithm.
3. ``iss`` is DLO_OIDC_ISSUER, ``aud`` names DLO_OIDC_API_AUDIENCE, ``exp`` has not passed and
   ``nbf``/``iat`` are not in the future, each with DLO_OIDC_LEEWAY_SECONDS of clock skew; ``sub``
   is present.

A refusal says which of these failed (:class:`TokenRefused`), and never quotes the token or any
part of it (a kid or an algorithm name is the caller's text): the reason goes to the caller, to
the audit and maybe to a log.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

import httpx
import jwt
from django.conf import settings

#: Asymmetric algorithms only: the key comes from the provider's published key set, and a
#: symmetric algorithm would take that public key as a shared secret.
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")

#: How long a discovery document and a key set are kept before they are read again.
CACHE_SECONDS = 300
#: The least time between two reads of the key set for tokens naming an unknown key, so that
#: made-up kids cannot make the console hammer the provider.
REFETCH_COOLDOWN_SECONDS = 30
TIMEOUT_SECONDS = 10


class TokenRefused(Exception):
    """The token is not one the API accepts: ``reason`` says why, for the caller and the audit.
    ``subject`` is the token's ``sub`` when its signature verified (else "")."""

    def __init__(self, reason: str, subject: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.subject = subject


class ProviderUnreachable(Exception):
    """The provider's discovery document or key set could not be read: the token can be neither
    accepted nor refused."""


def enabled() -> bool:
    """Whether the API accepts the provider's tokens: both the issuer and the audience are set."""
    return bool(settings.DLO_OIDC_ISSUER and settings.DLO_OIDC_API_AUDIENCE)


@dataclass
class _Provider:
    metadata: dict[str, Any]
    keys: jwt.PyJWKClient


_lock = threading.Lock()
_providers: dict[str, _Provider] = {}


def signing_keys(issuer: str | None = None) -> jwt.PyJWKClient:
    """The provider's key set (from its ``jwks_uri``), cached CACHE_SECONDS and read again when
    a token names an unknown key (at most once every REFETCH_COOLDOWN_SECONDS)."""
    return _provider(issuer or settings.DLO_OIDC_ISSUER).keys


def forget_provider() -> None:
    """Drop what was read (a test that starts another provider, a changed issuer)."""
    with _lock:
        _providers.clear()


def _provider(issuer: str) -> _Provider:
    with _lock:
        known = _providers.get(issuer)
        if known is not None:
            return known
        url = issuer.rstrip("/") + "/.well-known/openid-configuration"
        try:
            response = httpx.get(url, timeout=TIMEOUT_SECONDS, follow_redirects=False)
            response.raise_for_status()
            metadata = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            raise ProviderUnreachable(f"the identity provider's discovery document ({url}) could not be read: "
                                      f"{type(exc).__name__}") from exc
        if not isinstance(metadata, dict) or metadata.get("issuer") != issuer or not metadata.get("jwks_uri"):
            raise ProviderUnreachable(f"the discovery document at {url} is not the configured issuer's "
                                      "(its issuer differs, or it names no jwks_uri)")
        try:
            keys = jwt.PyJWKClient(metadata["jwks_uri"], cache_jwk_set=True, lifespan=CACHE_SECONDS,
                                   timeout=TIMEOUT_SECONDS, cooldown_duration=REFETCH_COOLDOWN_SECONDS)
        except jwt.PyJWKClientError as exc:
            raise ProviderUnreachable("the discovery document's jwks_uri is not an http(s) URL") from exc
        _providers[issuer] = _Provider(metadata, keys)
        return _providers[issuer]


def validate(token: str) -> dict[str, Any]:
    """The claims of a token the API accepts (the module's rules 1-3), or TokenRefused."""
    try:
        header = jwt.get_unverified_header(token)
    except jwt.DecodeError:
        raise TokenRefused("the bearer token is not a well-formed JWT") from None
    algorithm = header.get("alg")
    if algorithm not in ALGORITHMS:
        raise TokenRefused(f"the token's signing algorithm is not accepted (only {', '.join(ALGORITHMS)})")
    kid = header.get("kid")
    if not isinstance(kid, str) or not kid:
        raise TokenRefused("the token names no signing key (kid)")
    try:
        key = signing_keys().get_signing_key(kid)
    except jwt.PyJWKClientConnectionError as exc:
        raise ProviderUnreachable("the identity provider's key set could not be read") from exc
    except jwt.PyJWKClientError:
        raise TokenRefused("the token is not signed with a key of the identity provider") from None
    # The key's own algorithm when its JWK names one; else the header's, from the allow-list
    # (PyJWT checks it fits the key's type).
    allowed = [key.algorithm_name] if key.algorithm_name in ALGORITHMS else [algorithm]
    try:
        return jwt.decode(
            token, key=key, algorithms=allowed, issuer=settings.DLO_OIDC_ISSUER,
            audience=settings.DLO_OIDC_API_AUDIENCE, leeway=settings.DLO_OIDC_LEEWAY_SECONDS,
            options={"require": ["exp", "iss", "aud", "sub"]},
        )
    except jwt.InvalidAlgorithmError:
        raise TokenRefused("the token's signing algorithm does not fit the provider's key") from None
    except jwt.InvalidSignatureError:
        raise TokenRefused("the token's signature does not verify with the identity provider's key") from None
    except jwt.DecodeError:
        raise TokenRefused("the token could not be decoded") from None
    # PyJWT checks the claims only after the signature verified: the subject below is the provider's.
    except jwt.ExpiredSignatureError:
        raise TokenRefused("the token has expired", _subject(token)) from None
    except jwt.ImmatureSignatureError:
        raise TokenRefused("the token is not valid yet (nbf or iat in the future)", _subject(token)) from None
    except jwt.InvalidIssuerError:
        raise TokenRefused("the token was issued by another provider (iss is not DLO_OIDC_ISSUER)",
                           _subject(token)) from None
    except jwt.InvalidAudienceError:
        raise TokenRefused("the token is not meant for this console's API (aud lacks DLO_OIDC_API_AUDIENCE)",
                           _subject(token)) from None
    except jwt.MissingRequiredClaimError as exc:
        raise TokenRefused(f"the token lacks the {exc.claim} claim", _subject(token)) from None
    except jwt.PyJWTError:
        raise TokenRefused("the token's claims could not be verified", _subject(token)) from None


def _subject(verified: str) -> str:
    """The ``sub`` of a token whose signature has verified (its other claims may not have)."""
    subject = jwt.decode(verified, options={"verify_signature": False}).get("sub")
    return subject if isinstance(subject, str) else ""
