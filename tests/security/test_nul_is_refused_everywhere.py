"""Finding 12 of issue 28: PostgreSQL text cannot hold NUL, and a NUL reached the database from
nine places, a 500 each: a fingerprint ``a%00b`` in the group endpoints and page, ``?owner=``,
``?tag=``, ``?origin=``, ``?fingerprint=``, and the same on pages. A NUL (and an unpaired
surrogate) in a path, a query string, a form or JSON is now refused with a 400 that says why,
before any view, and nothing is written."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from console.models import AuditEvent, GroupNote
from tests.web.factory import store_letter

pytestmark = [pytest.mark.django_db, pytest.mark.role("admin")]

NUL = "a\x00b"


@pytest.fixture
def api(operator) -> APIClient:
    client = APIClient()
    client.force_authenticate(operator)
    return client


@pytest.fixture
def pages(client, operator):
    client.force_login(operator)
    return client


@pytest.fixture
def fingerprint(place) -> str:
    return store_letter(place, exception_type="TimeoutError").fingerprint


def _refused_api(answer) -> None:
    assert answer.status_code == 400, answer.content
    assert "NUL" in answer.json()["detail"]


def _refused_page(answer) -> None:
    assert answer.status_code == 400, answer.content[:300]
    assert "NUL" in answer.content.decode()


@pytest.mark.parametrize(("path", "parameter"), [
    ("/api/groups/", "owner"), ("/api/groups/", "tag"),
    ("/api/letters/", "origin"), ("/api/letters/", "fingerprint"),
])
def test_a_query_parameter_with_nul_is_a_400_on_the_api(api, fingerprint, path, parameter):
    _refused_api(api.get(path, {parameter: NUL}))


def test_a_fingerprint_with_nul_is_a_400_on_the_group_endpoints(api, fingerprint):
    _refused_api(api.get("/api/groups/a%00b/"))
    _refused_api(api.patch("/api/groups/a%00b/", {"status": "investigating"}, format="json"))
    _refused_api(api.post("/api/groups/a%00b/notes/", {"text": "hello"}, format="json"))
    assert not AuditEvent.objects.filter(action__startswith="group.").exists()


@pytest.mark.parametrize(("path", "parameter"), [
    ("/groups/", "owner"), ("/groups/", "tag"), ("/letters/", "origin"), ("/letters/", "fingerprint"),
])
def test_a_query_parameter_with_nul_is_a_400_on_the_pages(pages, fingerprint, path, parameter):
    _refused_page(pages.get(path, {parameter: NUL}))


def test_a_fingerprint_with_nul_is_a_400_on_the_group_page(pages, fingerprint):
    _refused_page(pages.get("/groups/a%00b/"))
    _refused_page(pages.post("/groups/a%00b/change/", {"status": "investigating", "reason": "r"}))


def test_htmx_gets_a_fragment(pages, fingerprint):
    answer = pages.get("/letters/", {"origin": NUL}, HTTP_HX_REQUEST="true")
    assert answer.status_code == 400 and answer.content.decode().startswith('<p class="error" role="alert">')


def test_a_form_field_with_nul_is_a_400(pages, fingerprint):
    answer = pages.post(f"/groups/{fingerprint}/change/", {"note": f"see {NUL}", "status": "investigating",
                                                           "reason": "r"})
    _refused_page(answer)
    assert not GroupNote.objects.exists() and not AuditEvent.objects.filter(action__startswith="group.").exists()


def test_json_with_nul_in_a_value_or_a_key_is_a_400(api, fingerprint):
    for body in ('{"text": "a\\u0000b"}', '{"text": "ok", "a\\u0000b": 1}'):
        answer = api.post(f"/api/groups/{fingerprint}/notes/", body, content_type="application/json")
        assert answer.status_code == 400, answer.content
        assert answer.json()["detail"].startswith("JSON parse error - ") and "NUL" in answer.json()["detail"]
    assert not GroupNote.objects.exists()


def test_an_unpaired_surrogate_in_a_query_string_is_no_500(api, fingerprint):
    # Django decodes the query string as UTF-8 with replacement: the surrogate's bytes arrive
    # as U+FFFD, which PostgreSQL stores; nothing is found, nothing fails.
    answer = api.get("/api/letters/?origin=%ED%A0%80")
    assert answer.status_code == 200 and answer.json()["results"] == []


def test_ascii_and_other_scripts_still_pass(api, fingerprint):
    assert api.get("/api/groups/", {"owner": "ölga", "tag": "账单"}).status_code == 200
    assert api.get(f"/api/groups/{fingerprint}/").status_code == 200
