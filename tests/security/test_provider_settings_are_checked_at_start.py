"""Issue 45: a wrong identity-provider setting is refused at start with its name, by a Django
system check (console.security.checks): ``manage.py check`` fails, and the web process
(console.wsgi, as Gunicorn loads it) refuses to start; a sound one passes."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.conf import settings

from tests.workers import test_database_url

BAD_MAPPING = '[{"group": "orders-team", "role": "boss"}]'
GOOD_MAPPING = '[{"group": "orders-team", "role": "operator"}]'


def _run(code_or_args: list[str], **env: str) -> subprocess.CompletedProcess:
    environment = {key: value for key, value in os.environ.items() if not key.startswith("DLO_OIDC")}
    environment.update(DATABASE_URL=test_database_url(), **env)
    return subprocess.run([sys.executable, *code_or_args], cwd=settings.BASE_DIR, env=environment,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.django_db
def test_a_malformed_mapping_fails_the_check_and_the_web_process(tmp_path):
    mapping = tmp_path / "mapping.json"
    mapping.write_text(BAD_MAPPING)
    checked = _run(["manage.py", "check"], DLO_OIDC_ROLE_MAPPING_FILE=str(mapping))
    assert checked.returncode != 0
    assert "DLO_OIDC_ROLE_MAPPING" in checked.stderr and "role must be one of" in checked.stderr

    web = _run(["-c", "import console.wsgi"], DLO_OIDC_ROLE_MAPPING_FILE=str(mapping))
    assert web.returncode != 0
    assert "ImproperlyConfigured" in web.stderr and "DLO_OIDC_ROLE_MAPPING" in web.stderr

    mapping.write_text(GOOD_MAPPING)
    assert _run(["manage.py", "check"], DLO_OIDC_ROLE_MAPPING_FILE=str(mapping)).returncode == 0
    assert _run(["-c", "import console.wsgi"], DLO_OIDC_ROLE_MAPPING_FILE=str(mapping)).returncode == 0


@pytest.mark.django_db
def test_an_issuer_must_be_an_absolute_https_url():
    for issuer, refused in [("login.example.com", "dlo.E002"), ("http://login.example.com", "dlo.E003")]:
        checked = _run(["manage.py", "check", "--deploy"], DLO_OIDC_ISSUER=issuer, DLO_OIDC_CLIENT_ID="console",
                       DLO_OIDC_API_AUDIENCE="urn:dlo:api")
        assert checked.returncode != 0 and refused in checked.stderr and "DLO_OIDC_ISSUER" in checked.stderr
    loopback = _run(["manage.py", "check"], DLO_OIDC_ISSUER="http://127.0.0.1:9", DLO_OIDC_CLIENT_ID="console",
                    DLO_OIDC_API_AUDIENCE="urn:dlo:api")
    assert loopback.returncode == 0, loopback.stderr
    allowed = _run(["manage.py", "check"], DLO_OIDC_ISSUER="http://login.example.com", DLO_OIDC_CLIENT_ID="console",
                   DLO_OIDC_API_AUDIENCE="urn:dlo:api", DLO_OIDC_ALLOW_HTTP="true")
    assert allowed.returncode == 0, allowed.stderr


@pytest.mark.django_db
def test_an_issuer_without_an_api_audience_is_warned_of():
    checked = _run(["manage.py", "check"], DLO_OIDC_ISSUER="https://login.example.com", DLO_OIDC_CLIENT_ID="x")
    assert checked.returncode == 0
    assert "dlo.W001" in checked.stderr and "DLO_OIDC_API_AUDIENCE" in checked.stderr
