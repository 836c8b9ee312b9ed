"""The API describes itself: an OpenAPI document at /api/schema/, for signed-in users."""

from __future__ import annotations

import pytest

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
