"""Tokens the API must refuse, each with 401, a Bearer challenge, a reason that says which check
failed, and an audit row: expired, tampered, meant for another audience, from another issuer,
``alg: none``, HS256 keyed with the provider's public key, signed by a key the provider does
not have, and no JWT at all. The provider is real; where it would never issue such a token,
the test signs one with its own key (oidc_provider.sign)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from console.models import AuditEvent
from console.services.claim_mappings import do_set_mapping

pytestmark = pytest.mark.django_db


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def segments(token: str) -> tuple[dict, dict, str]:
    header, payload, signature = token.split(".")
    return (json.loads(base64.urlsafe_b64decode(header + "==")), json.loads(base64.urlsafe_b64decode(payload + "==")),
            signature)


def claims(provider, **changes) -> dict:
    now = int(time.time())
    return {"iss": provider.issuer, "sub": provider.script.client_id, "client_id": provider.script.client_id,
            "aud": provider.api_audience, "iat": now, "exp": now + 600, "scope": "api",
            "groups": ["orders-team"], **changes}


@pytest.fixture
def provider(oidc_settings, places):
    """The provider, its script in orders-team, mapped to the operator role on orders.dlq."""
    do_set_mapping(actor="tests", group="orders-team", role="operator", places=[places.orders])
    oidc_settings.set_script_groups(["orders-team"])
    return oidc_settings


def tampered(provider) -> str:
    """A real token whose payload now claims the admins' group, its signature kept."""
    token = provider.client_credentials_token()
    header, _, signature = token.split(".")
    changed = segments(token)[1] | {"groups": ["dlo-admins"]}
    return f"{header}.{b64(json.dumps(changed).encode())}.{signature}"


def alg_none(provider) -> str:
    header = {"alg": "none", "typ": "at+jwt", "kid": provider.kid}
    return f"{b64(json.dumps(header).encode())}.{b64(json.dumps(claims(provider)).encode())}."


def hs256_with_public_key(provider) -> str:
    """The classic confusion: HMAC keyed with the provider's public key, which anyone can read."""
    public = provider.signing_key.public_key().public_bytes(serialization.Encoding.PEM,
                                                            serialization.PublicFormat.SubjectPublicKeyInfo)
    signing_input = (f"{b64(json.dumps({'alg': 'HS256', 'typ': 'at+jwt', 'kid': provider.kid}).encode())}."
                     f"{b64(json.dumps(claims(provider)).encode())}")
    return f"{signing_input}.{b64(hmac.new(public, signing_input.encode(), hashlib.sha256).digest())}"


def another_key(provider, kid: str) -> str:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return jwt.encode(claims(provider), key, algorithm="RS256", headers={"kid": kid, "typ": "at+jwt"})


CASES = {
    "expired": (lambda p: p.sign(claims(p, iat=int(time.time()) - 7200, exp=int(time.time()) - 3600)),
                "the token has expired"),
    "tampered": (tampered, "signature does not verify"),
    "wrong audience": (lambda p: p.client_credentials_token(resource=p.other_audience),
                       "not meant for this console's API"),
    "wrong issuer": (lambda p: p.sign(claims(p, iss="http://127.0.0.1:1")), "issued by another provider"),
    "alg none": (alg_none, "signing algorithm is not accepted"),
    "HS256 with the public key": (hs256_with_public_key, "signing algorithm is not accepted"),
    "another key, unknown kid": (lambda p: another_key(p, "not-the-providers"), "not signed with a key of"),
    "another key, the provider's kid": (lambda p: another_key(p, p.kid), "signature does not verify"),
    "not yet valid": (lambda p: p.sign(claims(p, nbf=int(time.time()) + 3600)), "not valid yet"),
    "no subject": (lambda p: p.sign({k: v for k, v in claims(p).items() if k != "sub"}), "lacks the sub claim"),
    "not a JWT": (lambda p: "not-a-jwt", "not a well-formed JWT"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_token_answers_401_and_is_audited(provider, places, bearer, case):
    make, reason = CASES[case]
    response = bearer(make(provider)).get("/api/letters/")
    assert response.status_code == 401, response.content
    assert response.headers["WWW-Authenticate"].startswith('Bearer realm="api", error="invalid_token"')
    assert reason in response.json()["detail"]
    (event,) = AuditEvent.objects.filter(action="api.token.refused")
    assert event.actor_name == "anonymous" and reason in event.details["reason"]
    assert event.details["provider"] == provider.issuer


def test_the_same_script_with_a_good_token_is_let_in(provider, places, bearer):
    """The control: the cases above fail for their fault, not for the set-up."""
    assert bearer(provider.client_credentials_token()).get("/api/letters/").status_code == 200
    assert bearer(provider.sign(claims(provider))).get("/api/letters/").status_code == 200


def test_clock_skew_within_the_leeway_is_allowed(provider, places, bearer, settings):
    settings.DLO_OIDC_LEEWAY_SECONDS = 60
    just_expired = provider.sign(claims(provider, iat=int(time.time()) - 700, exp=int(time.time()) - 20))
    assert bearer(just_expired).get("/api/letters/").status_code == 200
