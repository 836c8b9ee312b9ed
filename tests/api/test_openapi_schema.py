"""The API describes itself: an OpenAPI document at /api/schema/, for signed-in users."""

from __future__ import annotations

import re

import pytest

from console.security.headers import policy_text

pytestmark = pytest.mark.django_db


def test_the_schema_names_the_endpoints_and_their_payloads(api):
    response = api.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = response.json()
    assert schema["openapi"].startswith("3.")
    named = {"/api/jobs/", "/api/letters/", "/api/letters/{letter_id}/", "/api/audit/verify/"}
    assert named <= set(schema["paths"])
    create = schema["paths"]["/api/jobs/"]["post"]
    assert set(create["responses"]) == {"202", "400"}
    ref = create["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    job_request = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]
    assert set(job_request["required"]) == {"action", "reason"}
    assert "password" not in schema["components"]["schemas"]["Broker"]["properties"]
    letters = schema["paths"]["/api/letters/"]["get"]
    parameters = {p["name"] for p in letters["parameters"]}
    assert {"place", "state", "origin", "reason", "q", "cursor", "page_size"} <= parameters


def test_the_swagger_page_is_served_to_signed_in_users(api):
    response = api.get("/api/docs/")
    assert response.status_code == 200
    assert b"/api/schema/" in response.content


def test_the_swagger_page_loads_its_scripts_from_the_console_under_its_policy(api, settings):
    """No CDN and no inline script: Swagger UI comes from the sidecar's static files."""
    response = api.get("/api/docs/")
    html = response.content.decode()
    scripts = re.findall(r"<script([^>]*)>", html)
    assert scripts and all(re.search(r'src="/static/', attributes) for attributes in scripts)
    assert '/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js' in html
    assert "<style" not in html and "cdn" not in html.lower()
    assert response["Content-Security-Policy"] == policy_text(settings.DLO_CONTENT_SECURITY_POLICY)
