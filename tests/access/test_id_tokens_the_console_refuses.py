"""Issue 33: the ID tokens the console's provider client (console.security.oidc.client, the one
the sign-in callback validates with) refuses, checked against the real provider's discovery and
JWKS: expired beyond the allowed clock skew, another issuer, another audience, another sign-in's
nonce, signed by a key not the provider's, and ``alg: none``; one within the skew passes."""

from __future__ import annotations

import base64
import json
import time

import jwt
import pytest
from authlib.integrations.base_client import OAuthError
from cryptography.hazmat.primitives.asymmetric import rsa
from joserfc.errors import JoseError

from console.security import oidc

NONCE = "n-0S6_WzA2Mj"


@pytest.fixture
def claims(oidc_settings, settings):
    settings.DLO_OIDC_LEEWAY_SECONDS = 60
    now = int(time.time())
    return {"iss": oidc_settings.issuer, "sub": "pia", "aud": oidc_settings.console.client_id, "nonce": NONCE,
            "iat": now, "exp": now + 300, "groups": ["orders-team"]}


def validated(id_token: str) -> dict:
    return dict(oidc.client().parse_id_token({"id_token": id_token, "access_token": "opaque"}, nonce=NONCE,
                                             leeway=oidc.settings.DLO_OIDC_LEEWAY_SECONDS))


def test_a_token_of_the_provider_for_this_sign_in_passes_even_a_little_late(oidc_settings, claims):
    assert validated(oidc_settings.sign(claims, typ="JWT"))["groups"] == ["orders-team"]
    late = {**claims, "iat": claims["iat"] - 400, "exp": claims["iat"] - 30}  # within the 60 s of skew
    assert validated(oidc_settings.sign(late, typ="JWT"))["sub"] == "pia"


@pytest.mark.parametrize("change", [
    {"exp": -120},  # expired beyond the skew
    {"iss": "http://127.0.0.1:9/another-issuer"},
    {"aud": "another-client"},
    {"nonce": "another-sign-in"},
])
def test_a_token_that_is_not_for_this_sign_in_is_refused(oidc_settings, claims, change):
    if "exp" in change:
        change = {"iat": claims["iat"] - 600, "exp": claims["iat"] + change["exp"]}
    with pytest.raises(JoseError):
        validated(oidc_settings.sign({**claims, **change}, typ="JWT"))


def test_a_token_signed_by_another_key_or_by_none_is_refused(oidc_settings, claims):
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    forged = jwt.encode(claims, stranger, algorithm="RS256", headers={"kid": oidc_settings.kid})
    with pytest.raises(JoseError):
        validated(forged)

    def part(value: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    with pytest.raises((JoseError, OAuthError, ValueError)):
        validated(f"{part({'alg': 'none', 'typ': 'JWT'})}.{part(claims)}.")
