"""Django system checks of the identity provider's settings, so that a wrong one is found at
start, with the setting's name, not at the first sign-in: ``manage.py check`` (and ``check
--deploy``) list them, runserver and migrate stop on them, and the web process refuses to
start (console.wsgi runs the checks before it serves).

- ``dlo.E001``: DLO_OIDC_ROLE_MAPPING (or its ``_FILE``) is not a mapping.
- ``dlo.E002``: DLO_OIDC_ISSUER is not an absolute http(s) URL.
- ``dlo.E003``: DLO_OIDC_ISSUER is plain http on a host that is not loopback, without
  DLO_OIDC_ALLOW_HTTP.
- ``dlo.W001``: DLO_OIDC_ISSUER is set and DLO_OIDC_API_AUDIENCE is not: the API refuses every
  bearer token (a warning: a console whose scripts use its own tokens needs none).
"""

from __future__ import annotations

import ipaddress
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core import checks

from console.access.claims import check_mapping
from console.env import ConfigError


@checks.register(checks.Tags.security)
def provider_settings(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    found: list[checks.CheckMessage] = []
    if settings.DLO_OIDC_ROLE_MAPPING.strip():
        try:
            check_mapping(settings.DLO_OIDC_ROLE_MAPPING)
        except ConfigError as exc:
            found.append(checks.Error(str(exc), id="dlo.E001", obj="DLO_OIDC_ROLE_MAPPING",
                                      hint="a JSON list of {\"group\": ..., \"role\": ...} (README.md, "
                                           "Signing in through your identity provider)"))
    issuer = settings.DLO_OIDC_ISSUER
    if issuer:
        parts = urlsplit(issuer)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            found.append(checks.Error("DLO_OIDC_ISSUER must be an absolute https URL", id="dlo.E002",
                                      obj="DLO_OIDC_ISSUER", hint="e.g. https://login.example.com/realms/main"))
        elif parts.scheme == "http" and not _loopback(parts.hostname) and not settings.DLO_OIDC_ALLOW_HTTP:
            found.append(checks.Error(
                "DLO_OIDC_ISSUER is plain http: tokens and sign-ins would cross the network unprotected",
                id="dlo.E003", obj="DLO_OIDC_ISSUER",
                hint="use the provider's https URL (http is taken on loopback, or with DLO_OIDC_ALLOW_HTTP=true)"))
        if not settings.DLO_OIDC_API_AUDIENCE:
            found.append(checks.Warning(
                "DLO_OIDC_ISSUER is set but DLO_OIDC_API_AUDIENCE is not: the API refuses every bearer token "
                "of the identity provider", id="dlo.W001", obj="DLO_OIDC_API_AUDIENCE",
                hint="set it to the audience the provider puts in scripts' access tokens"))
    return found


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
