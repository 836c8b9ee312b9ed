"""The identity provider as the console knows it: its discovery document and key set, read
over HTTP and kept for the lifetimes the provider gives them, and its failures kept too, so
that the console stays fast while the provider is away.

- The discovery document (``DLO_OIDC_ISSUER/.well-known/openid-configuration``) must name the
  configured issuer and a ``jwks_uri``; it and the key set are kept for their
  ``Cache-Control: max-age`` (:data:`DEFAULT_SECONDS` without one), within
  [:data:`LEAST_SECONDS`, :data:`MOST_SECONDS`].
- A failed read starts a back-off (:data:`FIRST_BACKOFF_SECONDS`, doubling up to
  :data:`MOST_BACKOFF_SECONDS`): until it ends nothing goes to the provider, and what needs it
  is told at once (:class:`Unreachable`, with how long to wait).
- Keys are kept past their lifetime while the provider cannot be read: a token signed by a key
  already known is still checked here (signature, issuer, audience, times). A token naming a
  key not in the set makes the set be read again, at most once every
  :data:`REFETCH_COOLDOWN_SECONDS`, so made-up key ids cannot make the console hammer the
  provider; that is also how a rotated key reaches the console.
- The provider is read in the background, one read at a time: callers use what is known
  meanwhile (a known key), or wait for the read a little (a key not known yet: a script's
  request at most :data:`SCRIPT_WAIT_SECONDS`, a person's sign-in at most
  :data:`WAIT_SECONDS`), and not at all once the provider has been away: they are told at once.
  :func:`warm` reads it when a web process starts, so that a script's first request finds the
  keys known.

:func:`health` tells the provider's state without calling it (``/healthz``).
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import httpx
import jwt
from django.conf import settings

DEFAULT_SECONDS = 300
LEAST_SECONDS = 30
MOST_SECONDS = 24 * 3600
FIRST_BACKOFF_SECONDS = 1.0
MOST_BACKOFF_SECONDS = 60.0
REFETCH_COOLDOWN_SECONDS = 30.0
#: How long a person's sign-in (and the provider's logout) waits for the provider to be read
#: (a new key, a stale document): a provider slower than that is read on in the background, the
#: request told to try again.
WAIT_SECONDS = 1.0
#: How long a script's request waits for a key not known yet. A script is told 503 with
#: Retry-After and tries again (the read goes on meanwhile): so a provider that hangs at the
#: start of an outage holds no request more than this (issue 45: within 100 ms).
SCRIPT_WAIT_SECONDS = 0.08
#: A provider that does not answer in a few seconds is counted away.
TIMEOUT = httpx.Timeout(5.0, connect=3.0)

_MAX_AGE = re.compile(r"(?:^|,)\s*max-age\s*=\s*(\d+)", re.IGNORECASE)


class Unreachable(Exception):
    """The provider's discovery document or key set could not be read: what needed it can be
    neither accepted nor refused. ``retry_after``: whole seconds until the console asks again."""

    def __init__(self, message: str, retry_after: float) -> None:
        super().__init__(message)
        self.retry_after = max(1, int(retry_after + 0.999))


@dataclass
class _Known:
    """What the console knows of one issuer (times on the monotonic clock)."""

    issuer: str
    metadata: dict[str, Any] | None = None
    metadata_until: float = 0.0
    keys: dict[str, jwt.PyJWK] = field(default_factory=dict)
    keys_until: float = 0.0
    keys_read_at: float = float("-inf")
    failures: int = 0
    retry_at: float = 0.0
    error: str = ""
    reading: threading.Event | None = None
    #: The read in flight has outlasted a caller's patience: the next ones do not wait for it.
    slow: bool = False

    def away(self, now: float) -> bool:
        return self.failures > 0 and now < self.retry_at

    def unreachable(self, now: float) -> Unreachable:
        return Unreachable(self.error, self.retry_at - now)


_lock = threading.Lock()
_known: dict[str, _Known] = {}


def _of(issuer: str | None) -> _Known:
    issuer = issuer or settings.DLO_OIDC_ISSUER
    with _lock:
        return _known.setdefault(issuer, _Known(issuer))


def forget() -> None:
    """Drop what was read (a test that starts another provider, a changed issuer)."""
    with _lock:
        _known.clear()


def metadata(issuer: str | None = None) -> dict[str, Any]:
    """The provider's discovery document, read again once its lifetime is over; Unreachable
    while the provider is away (at once during the back-off)."""
    known = _of(issuer)
    now = time.monotonic()
    if known.away(now):
        raise known.unreachable(now)
    if known.metadata is not None and now < known.metadata_until:
        return known.metadata
    _read(known, keys=False)
    assert known.metadata is not None
    return known.metadata


def warm(issuer: str | None = None) -> None:
    """Start reading the provider's document and key set in the background (a web process that
    starts), waiting for nothing."""
    try:
        _read(_of(issuer), keys=True, patience=0.0)
    except Unreachable:
        pass  # the read goes on; what it finds is kept


def signing_key(kid: str, issuer: str | None = None, *, patience: float = WAIT_SECONDS) -> jwt.PyJWK | None:
    """The provider's key ``kid``, or None when its key set (read again if need be) has none.
    A key already known is given while the provider is away; Unreachable for a key not known
    yet, when the set cannot be read, or has not been within ``patience`` seconds."""
    known = _of(issuer)
    now = time.monotonic()
    key = known.keys.get(kid)
    if key is not None:
        if now < known.keys_until or known.away(now):
            return key
        try:
            _read(known, keys=True, patience=0.0)
        except Unreachable:
            return key  # kept: the provider is away, the key is the provider's
        return known.keys.get(kid)
    if known.away(now):
        raise known.unreachable(now)
    if now - known.keys_read_at < REFETCH_COOLDOWN_SECONDS and now < known.keys_until:
        return None
    # A process that knows no key yet (just started, warm() not done) waits as a sign-in does:
    # there is nothing known to answer fast with.
    _read(known, keys=True, patience=patience if known.keys else max(patience, WAIT_SECONDS))
    return known.keys.get(kid)


def health(issuer: str | None = None) -> dict[str, Any]:
    """The provider's state as last seen, without calling it: ``up`` (read), ``away`` (the last
    read failed; ``retry_in`` seconds until the next try), or ``unknown`` (not read yet)."""
    known = _of(issuer)
    now = time.monotonic()
    if known.failures:
        return {"state": "away", "retry_in": max(0, round(known.retry_at - now))}
    if known.metadata is None:
        return {"state": "unknown"}
    return {"state": "up", "keys": len(known.keys)}


def _read(known: _Known, *, keys: bool, patience: float = WAIT_SECONDS) -> None:
    """Read the discovery document when it is stale or missing, and the key set if ``keys``.

    The read is made in the background, one at a time. The caller waits for it at most
    ``patience`` seconds, and not at all once the provider has been away; a read
    not done by then goes on while the caller is told Unreachable (try again in a second): no
    request is held for a hung provider's timeout."""
    started = time.monotonic()
    for _ in range(2):  # a second time when the read that ended read no keys and keys are wanted
        with _lock:
            reading = known.reading
            if reading is None:
                reading = known.reading = threading.Event()
                threading.Thread(target=_fetch_quietly, args=(known, keys), name="dlo-provider-read",
                                 daemon=True).start()
        if not reading.wait(patience if not (known.failures or known.slow) else 0.0):
            if patience:
                known.slow = True  # a caller gave up on this read: nobody else waits for it
            raise Unreachable(known.error or "the identity provider has not answered yet", 1)
        now = time.monotonic()
        if known.away(now):
            raise known.unreachable(now)
        if not keys or known.keys_read_at >= started:
            return
    raise Unreachable("the identity provider's key set is being read", 1)


def _fetch_quietly(known: _Known, keys: bool) -> None:
    try:
        _fetch(known, keys=keys)
    except Unreachable:
        pass  # kept on ``known``: the next caller is told
    finally:
        _done_reading(known)


def _done_reading(known: _Known) -> None:
    with _lock:
        event, known.reading, known.slow = known.reading, None, False
    if event is not None:
        event.set()


def _fetch(known: _Known, *, keys: bool) -> None:
    now = time.monotonic()
    url = known.issuer.rstrip("/") + "/.well-known/openid-configuration"
    try:
        if known.metadata is None or now >= known.metadata_until:
            document, lifetime = _get(url)
            if (not isinstance(document, dict) or document.get("issuer", "").rstrip("/") != known.issuer.rstrip("/")
                    or not isinstance(document.get("jwks_uri"), str)):
                raise _Refused(f"the discovery document at {url} is not the configured issuer's "
                               "(its issuer differs, or it names no jwks_uri)")
            known.metadata, known.metadata_until = document, now + lifetime
        if keys:
            assert known.metadata is not None
            key_set, lifetime = _get(known.metadata["jwks_uri"])
            try:
                found = jwt.PyJWKSet.from_dict(key_set).keys
            except (jwt.PyJWKSetError, jwt.PyJWKError, TypeError, AttributeError) as exc:
                raise _Refused(f"the identity provider's key set is not a JWK set: {type(exc).__name__}") from exc
            known.keys = {key.key_id: key for key in found if key.key_id}
            known.keys_until, known.keys_read_at = now + lifetime, now
    except (httpx.HTTPError, ValueError, _Refused) as exc:
        known.failures += 1
        backoff = min(MOST_BACKOFF_SECONDS, FIRST_BACKOFF_SECONDS * 2 ** (known.failures - 1))
        known.retry_at = time.monotonic() + backoff
        known.error = str(exc) if isinstance(exc, _Refused) else (
            f"the identity provider ({url}) could not be read: {type(exc).__name__}")
        raise known.unreachable(time.monotonic()) from exc
    known.failures, known.error = 0, ""


class _Refused(Exception):
    """The provider answered something that is not what it should be."""


def _get(url: str) -> tuple[Any, float]:
    """A JSON document and how long it may be kept."""
    response = httpx.get(url, timeout=TIMEOUT, follow_redirects=False)
    response.raise_for_status()
    return response.json(), _lifetime(response.headers.get("cache-control", ""))


def _lifetime(cache_control: str) -> float:
    if "no-store" in cache_control.lower() or "no-cache" in cache_control.lower():
        return LEAST_SECONDS
    found = _MAX_AGE.search(cache_control)
    seconds = int(found.group(1)) if found else DEFAULT_SECONDS
    return float(min(MOST_SECONDS, max(LEAST_SECONDS, seconds)))
