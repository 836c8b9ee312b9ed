"""The identity provider's access tokens (JWT, RFC 9068), as scripts send them to the API.

A token is accepted only when all of these hold, checked by PyJWT (a maintained library: the
same checks as Authlib's, a smaller dependency) with the provider's keys as
console.security.provider keeps them (read again when a token names a key not known yet, which
is how a rotation reaches us; kept while the provider is away):

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

from typing import Any

import jwt
from django.conf import settings

from console.security import provider

#: Asymmetric algorithms only: the key comes from the provider's published key set, and a
#: symmetric algorithm would take that public key as a shared secret.
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")


class TokenRefused(Exception):
    """The token is not one the API accepts: ``reason`` says why, for the caller and the audit.
    ``subject`` is the token's ``sub`` when its signature verified (else "")."""

    def __init__(self, reason: str, subject: str = "") -> None:
        super().__init__(reason)
        self.reason = reason
        self.subject = subject


def enabled() -> bool:
    """Whether the API accepts the provider's tokens: both the issuer and the audience are set."""
    return bool(settings.DLO_OIDC_ISSUER and settings.DLO_OIDC_API_AUDIENCE)


def validate(token: str) -> dict[str, Any]:
    """The claims of a token the API accepts (the module's rules 1-3), or TokenRefused; or
    provider.Unreachable when its key is not known and the provider cannot be read."""
    return verified(token, audience=settings.DLO_OIDC_API_AUDIENCE, required=("exp", "iss", "aud", "sub"),
                    meant_for="this console's API (aud lacks DLO_OIDC_API_AUDIENCE)",
                    patience=provider.SCRIPT_WAIT_SECONDS)


def verified(token: str, *, audience: str, required: tuple[str, ...], meant_for: str,
             patience: float = provider.WAIT_SECONDS) -> dict[str, Any]:
    """The claims of a JWT the provider signed for ``audience`` (rules 1-3, with the claims
    ``required``), or TokenRefused saying which check failed: the API's access tokens, and the
    provider's logout tokens (console.security.logout). ``meant_for`` says whom the token
    should be for, in a refusal; ``patience``: how long to wait for the provider's key set when
    the token's key is not known yet."""
    try:
        header = jwt.get_unverified_header(token)
    except jwt.DecodeError:
        raise TokenRefused("the token is not a well-formed JWT") from None
    algorithm = header.get("alg")
    if algorithm not in ALGORITHMS:
        raise TokenRefused(f"the token's signing algorithm is not accepted (only {', '.join(ALGORITHMS)})")
    kid = header.get("kid")
    if not isinstance(kid, str) or not kid:
        raise TokenRefused("the token names no signing key (kid)")
    key = provider.signing_key(kid, patience=patience)  # provider.Unreachable: neither accepted nor refused
    if key is None:
        raise TokenRefused("the token is not signed with a key of the identity provider")
    # The key's own algorithm when its JWK names one; else the header's, from the allow-list
    # (PyJWT checks it fits the key's type).
    allowed = [key.algorithm_name] if key.algorithm_name in ALGORITHMS else [algorithm]
    try:
        return jwt.decode(
            token, key=key, algorithms=allowed, issuer=settings.DLO_OIDC_ISSUER,
            audience=audience, leeway=settings.DLO_OIDC_LEEWAY_SECONDS, options={"require": list(required)},
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
        raise TokenRefused(f"the token is not meant for {meant_for}", _subject(token)) from None
    except jwt.MissingRequiredClaimError as exc:
        raise TokenRefused(f"the token lacks the {exc.claim} claim", _subject(token)) from None
    except jwt.PyJWTError:
        raise TokenRefused("the token's claims could not be verified", _subject(token)) from None


def _subject(verified: str) -> str:
    """The ``sub`` of a token whose signature has verified (its other claims may not have)."""
    subject = jwt.decode(verified, options={"verify_signature": False}).get("sub")
    return subject if isinstance(subject, str) else ""
