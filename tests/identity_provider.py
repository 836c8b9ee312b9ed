"""A real OpenID provider for the tests: panva's certified oidc-provider under Node, on loopback.

Loaded as a pytest plugin (``-p tests.identity_provider`` in pytest.ini), so its fixtures serve
every tests folder:

- ``oidc_provider``: the provider (one Node process for the session, started on first use),
  with its state reset for the test: no users, the console's client and the script client
  with no claims. See :class:`IdentityProvider` for what a test can do with it.

The program is ``tests/oidc_provider/server.js``; ``scripts/bootstrap`` installs its packages
(``npm ci``, pinned by package-lock.json).
"""

from __future__ import annotations

import base64
import json
import secrets
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

SERVER = Path(__file__).resolve().parent / "oidc_provider"

#: The audience of the API's tokens (a resource indicator), and another one the provider also
#: issues tokens for, so a test can hold a real token meant for someone else.
API_AUDIENCE = "urn:dlo:api"
OTHER_AUDIENCE = "urn:dlo:other-api"


@dataclass(frozen=True)
class Client:
    """A client registered at the provider: id and secret (client_secret_basic or _post)."""

    client_id: str
    client_secret: str


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def b64url_uint(value: int) -> str:
    raw = value.to_bytes((value.bit_length() + 7) // 8, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def private_jwk(key: rsa.RSAPrivateKey, kid: str) -> dict[str, str]:
    """The key as a private JWK (RFC 7518, 6.3), which oidc-provider signs with."""
    numbers = key.private_numbers()
    public = numbers.public_numbers
    return {
        "kty": "RSA", "kid": kid, "use": "sig", "alg": "RS256",
        "n": b64url_uint(public.n), "e": b64url_uint(public.e), "d": b64url_uint(numbers.d),
        "p": b64url_uint(numbers.p), "q": b64url_uint(numbers.q), "dp": b64url_uint(numbers.dmp1),
        "dq": b64url_uint(numbers.dmq1), "qi": b64url_uint(numbers.iqmp),
    }


@dataclass
class IdentityProvider:
    """A running provider and what a test may change at it.

    ``issuer``: its issuer URL (``http://127.0.0.1:<port>``; discovery under
    ``/.well-known/openid-configuration``). ``console``: the console's client (authorization
    code with PKCE S256, scopes openid profile email groups). ``script``: a script's client
    (client_credentials). ``api_audience``: the audience the script's tokens are issued for.
    ``signing_key`` / ``kid``: the provider's own RSA key, for a test that needs a token the
    provider would never issue (expired, another issuer) signed as the provider signs.
    """

    issuer: str
    state_file: Path
    console: Client
    script: Client
    signing_key: rsa.RSAPrivateKey
    kid: str
    api_audience: str = API_AUDIENCE
    other_audience: str = OTHER_AUDIENCE
    state: dict[str, Any] = field(default_factory=dict)

    # --- what the provider knows ----------------------------------------------------------

    def reset(self) -> None:
        """No users, the two clients, no client claims; the console's client redirects to
        http://127.0.0.1/oidc/callback/ until :meth:`set_console_redirects` says otherwise."""
        self.state = {
            "users": {},
            "clients": [
                {
                    "client_id": self.console.client_id,
                    "client_secret": self.console.client_secret,
                    "client_name": "Dead Letter Office",
                    "grant_types": ["authorization_code", "refresh_token"],
                    "response_types": ["code"],
                    "redirect_uris": ["http://127.0.0.1/oidc/callback/"],
                    "post_logout_redirect_uris": ["http://127.0.0.1/"],
                    "token_endpoint_auth_method": "client_secret_basic",
                    "scope": "openid offline_access profile email groups",
                },
                {
                    "client_id": self.script.client_id,
                    "client_secret": self.script.client_secret,
                    "client_name": "A script",
                    "grant_types": ["client_credentials"],
                    "response_types": [],
                    "redirect_uris": [],
                    "token_endpoint_auth_method": "client_secret_basic",
                },
            ],
            "client_claims": {},
        }
        self._write()

    def set_user(self, sub: str, password: str, groups: list[str], **claims: Any) -> None:
        """Add or change a person: ``sub`` is both the subject and what they type as the
        username; ``groups`` is their groups claim; other claims (email, name,
        preferred_username, roles) as keywords. Applies from the next token the provider issues
        (a session the person already has at the provider keeps, but its next ID token and
        userinfo answer the new groups)."""
        self.state["users"][sub] = {"password": password, "groups": list(groups),
                                    "preferred_username": sub, **claims}
        self._write()

    def set_users(self, users: dict[str, dict[str, Any]]) -> None:
        """Replace every person: ``{sub: {"password": ..., "groups": [...], ...claims}}``."""
        self.state["users"] = {sub: dict(user) for sub, user in users.items()}
        self._write()

    def remove_user(self, sub: str) -> None:
        self.state["users"].pop(sub, None)
        self._write()

    def set_client_claims(self, client_id: str, claims: dict[str, Any]) -> None:
        """The claims a client's client-credentials tokens carry, e.g. ``{"groups": [...]}``
        (applies from the next token)."""
        self.state["client_claims"][client_id] = dict(claims)
        self._write()

    def set_script_groups(self, groups: list[str], claim: str = "groups") -> None:
        """The groups claim of the script client's tokens."""
        self.set_client_claims(self.script.client_id, {claim: list(groups)})

    def set_console_redirects(self, redirect_uris: list[str],
                              post_logout_redirect_uris: list[str] | None = None) -> None:
        """The console client's registered redirect URIs (exact match, as at any provider), e.g.
        ``[live_server.url + "/oidc/callback/"]``, and where RP-initiated logout may return."""
        console = self.state["clients"][0]
        console["redirect_uris"] = list(redirect_uris)
        if post_logout_redirect_uris is not None:
            console["post_logout_redirect_uris"] = list(post_logout_redirect_uris)
        self._write()

    def set_console_back_channel(self, uri: str) -> None:
        """Where the provider posts its logout tokens for the console (OpenID Connect
        Back-Channel Logout 1.0), with the provider session's ``sid`` in them."""
        console = self.state["clients"][0]
        console["backchannel_logout_uri"] = uri
        console["backchannel_logout_session_required"] = True
        self._write()

    def _write(self) -> None:
        # Written whole then renamed, so the provider never reads half a file.
        partial = self.state_file.with_suffix(".partial")
        partial.write_text(json.dumps(self.state))
        partial.replace(self.state_file)

    # --- what a client would do -----------------------------------------------------------

    def discovery(self) -> dict[str, Any]:
        response = httpx.get(f"{self.issuer}/.well-known/openid-configuration", timeout=10)
        response.raise_for_status()
        return response.json()

    def client_credentials_token(self, client: Client | None = None, resource: str | None = None,
                                 scope: str = "api") -> str:
        """A JWT access token from the token endpoint (client_credentials grant, resource
        indicator ``resource``, by default the API's audience), for the script client unless
        another is given."""
        client = client or self.script
        response = httpx.post(
            self.discovery()["token_endpoint"],
            data={"grant_type": "client_credentials", "scope": scope,
                  "resource": resource or self.api_audience},
            auth=(client.client_id, client.client_secret), timeout=10,
        )
        if response.status_code != 200:
            raise AssertionError(f"the provider refused the token: {response.status_code} {response.text}")
        return response.json()["access_token"]

    def sign(self, claims: dict[str, Any], **headers: Any) -> str:
        """A JWT signed with the provider's own key (RS256, its kid), with the claims given:
        for tokens the provider would not issue, such as an expired one or another issuer's.
        ``headers`` override the header (typ, alg is RS256)."""
        header = {"kid": self.kid, "typ": "at+jwt", **headers}
        return jwt.encode(claims, self.signing_key, algorithm="RS256", headers=header)


@contextmanager
def running_provider(folder: Path, port: int | None = None) -> Iterator[IdentityProvider]:
    """A provider process of its own, with a new signing key, on ``port`` (a free one if None),
    its files in ``folder``; stopped on leaving. Most tests want the ``oidc_provider`` fixture;
    this is for one that needs another (a key rotation: a second one on the same port)."""
    node = shutil.which("node")
    if node is None:
        pytest.fail("the OpenID provider needs Node.js (node) on the PATH")
    if not (SERVER / "node_modules" / "oidc-provider").is_dir():
        pytest.fail(f"the OpenID provider's packages are missing: run scripts/bootstrap (npm ci in {SERVER})")

    folder.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    issuer = f"http://127.0.0.1:{port}"
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    kid = "dlo-tests-" + secrets.token_hex(4)
    config = {
        "issuer": issuer,
        "jwks": {"keys": [private_jwk(key, kid)]},
        "resources": {API_AUDIENCE: {"scope": "api", "ttl": 600},
                      OTHER_AUDIENCE: {"scope": "api", "ttl": 600}},
        "cookie_keys": [secrets.token_hex(16)],
    }
    (folder / "provider.json").write_text(json.dumps(config))
    provider = IdentityProvider(
        issuer=issuer, state_file=folder / "state.json",
        console=Client("dlo-console", secrets.token_urlsafe(24)),
        script=Client("dlo-script", secrets.token_urlsafe(24)),
        signing_key=key, kid=kid,
    )
    provider.reset()
    with (folder / "provider.log").open("w") as log:
        process = subprocess.Popen(
            [node, str(SERVER / "server.js"), "--port", str(port),
             "--config", str(folder / "provider.json"), "--state", str(provider.state_file)],
            cwd=SERVER, stdout=log, stderr=subprocess.STDOUT,
        )
        try:
            wait_for_discovery(provider, process, folder / "provider.log")
            yield provider
        finally:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def wait_for_discovery(provider: IdentityProvider, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 30
    while True:
        if process.poll() is not None:
            pytest.fail(f"the OpenID provider exited ({process.returncode}): {log.read_text()[-2000:]}")
        try:
            if provider.discovery()["issuer"] == provider.issuer:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            pytest.fail("the OpenID provider's discovery did not answer within 30 s")
        time.sleep(0.1)


@pytest.fixture(scope="session")
def oidc_provider_process(tmp_path_factory) -> Iterator[IdentityProvider]:
    """The Node process of the provider, for the session (use ``oidc_provider`` in a test)."""
    with running_provider(tmp_path_factory.mktemp("oidc_provider")) as provider:
        yield provider


@pytest.fixture
def oidc_provider(oidc_provider_process: IdentityProvider) -> IdentityProvider:
    """The provider with its state reset for this test (no users; the two clients)."""
    oidc_provider_process.reset()
    return oidc_provider_process


@pytest.fixture
def oidc_settings(settings, oidc_provider: IdentityProvider) -> Iterator[IdentityProvider]:
    """The console configured for the provider: DLO_OIDC_ISSUER, the console's client
    (DLO_OIDC_CLIENT_ID/SECRET) and the API's audience (DLO_OIDC_API_AUDIENCE), with what the
    console had read of another provider forgotten. Returns the provider."""
    # Imported here: this plugin is loaded before Django has its settings.
    from console.security import provider

    settings.DLO_OIDC_ISSUER = oidc_provider.issuer
    settings.DLO_OIDC_CLIENT_ID = oidc_provider.console.client_id
    settings.DLO_OIDC_CLIENT_SECRET = oidc_provider.console.client_secret
    settings.DLO_OIDC_API_AUDIENCE = oidc_provider.api_audience
    provider.forget()
    yield oidc_provider
    provider.forget()
