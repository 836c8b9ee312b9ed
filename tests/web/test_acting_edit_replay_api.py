"""The API twin of edit and replay: POST /api/letters/{id}/edit-replay/ makes the same copy,
job and audited diff as the page."""

from __future__ import annotations

import base64

import pytest
from rest_framework.test import APIClient

from console.jobs.door.runner import run_job
from console.letters.values import from_json
from console.models import AuditEvent, DeadLetter
from tests.web.factory import store_letter

pytestmark = pytest.mark.django_db


@pytest.fixture
def api(operator) -> APIClient:
    client = APIClient()
    client.force_authenticate(operator)
    return client


def _post(api, letter, payload):
    return api.post(f"/api/letters/{letter.pk}/edit-replay/", payload, format="json")


def test_text_body_and_tagged_headers_are_replayed_as_a_copy(api, place, memory_broker):
    fake, _ = memory_broker
    letter = store_letter(place, b"amount=10", headers={"x-a": "1"})
    response = _post(api, letter, {"body": "amount=12", "headers": {"x-a": "2", "x-raw": {"$bytes": "AAE="}},
                                   "reason": "typo in amount", "ticket": "INC-3"})
    assert response.status_code == 202, response.content
    job = response.json()
    assert job["kind"] == "edit_replay" and job["reason"] == "typo in amount" and job["ticket"] == "INC-3"
    event = AuditEvent.objects.get(action="edit_replay")
    assert event.job_id == job["id"] and event.details["headers"]["changed"] == {"x-a": {"before": "1", "after": "2"}}
    assert run_job(job["id"]) == "succeeded"
    (delivered,) = fake.queue("orders")
    assert delivered.body == b"amount=12" and delivered.headers["x-raw"] == b"\x00\x01"
    assert DeadLetter.objects.get(pk=letter.pk).state == "failed"


def test_a_base64_body_keeps_the_letters_headers_when_none_are_given(api, place):
    letter = store_letter(place, b"\x00old", headers={"x-a": "1"})
    response = _post(api, letter, {"body": {"base64": base64.b64encode(b"\x00new").decode()}, "reason": "r"})
    assert response.status_code == 202, response.content
    copy = DeadLetter.objects.exclude(pk=letter.pk).get()
    assert copy.body_bytes == b"\x00new" and copy.headers == {"x-a": "1"}
    assert AuditEvent.objects.get(action="edit_replay").details["headers"] == {"added": {}, "removed": {},
                                                                               "changed": {}}


@pytest.mark.parametrize(
    "payload, status, message",
    [
        ({"body": "x"}, 400, "reason"),
        ({"body": {"base64": "!!"}, "reason": "r"}, 400, "base64 does not decode"),
        ({"body": "x", "headers": {"t": {"$ts": "soon"}}, "reason": "r"}, 400, "does not decode"),
    ],
)
def test_bad_requests_are_refused_and_change_nothing(api, place, payload, status, message):
    letter = store_letter(place, b"x")
    response = _post(api, letter, payload)
    assert response.status_code == status and message in response.content.decode()
    assert DeadLetter.objects.count() == 1 and not AuditEvent.objects.filter(action="edit_replay").exists()


def test_a_header_with_nul_is_kept_exactly_in_the_copy(api, place):
    letter = store_letter(place, b"x")
    response = _post(api, letter, {"body": "x", "headers": {"t": "a\u0000b"}, "reason": "r"})
    assert response.status_code == 202
    copy = DeadLetter.objects.exclude(pk=letter.pk).get()
    assert from_json(copy.headers) == {"t": "a\x00b"}


def test_a_purged_letter_cannot_be_edited(api, place):
    letter = store_letter(place, b"x")
    DeadLetter.objects.filter(pk=letter.pk).update(state="purged", body=b"", body_erased=True)
    response = _post(api, letter, {"body": "y", "reason": "r"})
    assert response.status_code == 400 and "only held or failed letters" in response.json()["detail"]
