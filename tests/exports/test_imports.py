"""Issue 48's import: an admin takes a JSON Lines export into an imported place of a broker
(``POST /api/imports/`` as a stream, or the Import letters page). Each line is checked and a bad
one reported by its number while the rest goes in; a file that is not an export is refused whole;
the import is audited with the file's SHA-256 and its exporter. A masked reader's export comes in
quarantined: a replay refuses those letters until an admin (not an operator) releases them. An
imported place is no queue of the broker: discovery leaves it be and a capture refuses it. Only an
admin of every place imports."""

from __future__ import annotations

import hashlib
import json

import pytest
from django.contrib.auth.models import Permission
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from rest_framework.test import APIClient

from console.access.roles import ADMIN, EXPORT, VIEWER, set_role
from console.jobs.door.requests import request_job
from console.models import AuditEvent, DeadLetter, DeadPlace, RoleScope
from console.services.brokers import do_discover
from console.services.jobs import JobError
from console.services.redaction import do_set_redaction_rule
from tests.exports.helpers import downloaded
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


def _client(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def _import(client, broker, data: bytes, place: str = "from-prod"):
    return client.post(f"/api/imports/?broker={broker.pk}&place={place}&file_name=prod.jsonl", data,
                       content_type="application/jsonl")


@pytest.fixture
def exported(memory_broker, operator) -> bytes:
    place = memory_place(memory_broker)
    store_letter(place, b'{"order": 1}', headers={"x-tenant": "acme"}, exception_type="Boom")
    store_letter(place, b"\x00\x01\xff", properties={"content_type": "application/octet-stream"})
    return downloaded(_client(operator).get("/api/letters/export/", {"format": "jsonl"}))


def test_an_export_comes_in_line_by_line_and_is_audited(exported, memory_broker, admin, operator):
    _, broker = memory_broker
    data = exported + b"{not json\n" + b'{"body_encoding": "text", "body": 7}\n'
    answer = _import(_client(admin), broker, data)
    assert answer.status_code == 201, answer.content
    result = answer.json()
    assert (result["imported"], result["bad_lines"]) == (2, 2)
    assert [row["line"] for row in result["refused"]] == [4, 5] and "not JSON" in result["refused"][0]["error"]
    place = DeadPlace.objects.get(pk=result["place"])
    assert (place.kind, place.broker_id) == ("imported", broker.pk)
    letters = list(DeadLetter.objects.filter(place=place).order_by("id"))
    originals = list(DeadLetter.objects.exclude(place=place).order_by("id"))
    assert [letter.body_bytes for letter in letters] == [letter.body_bytes for letter in originals]
    assert letters[0].headers == originals[0].headers and letters[1].properties == originals[1].properties
    assert letters[0].exception_type == "Boom" and letters[0].fingerprint == originals[0].fingerprint
    event = AuditEvent.objects.get(action="letters.imported")
    assert event.details["sha256"] == hashlib.sha256(data).hexdigest() == result["sha256"]
    assert event.details["exported_by"] == operator.username and event.details["bad_lines"] == 2

    refused = _import(_client(admin), broker, b'{"id": 1}\n')
    assert refused.status_code == 400 and "not an export" in refused.json()["detail"]

    # An imported place is no queue of the broker: discovery leaves it, a capture refuses it.
    do_discover(broker, actor="tests")
    place.refresh_from_db()
    assert not place.gone
    with pytest.raises(JobError, match="imported"):
        request_job("capture", place=place, actor=admin, reason="no")


def test_a_masked_export_comes_in_quarantined_until_an_admin_releases_it(memory_broker, operator, admin,
                                                                          django_user_model):
    _, broker = memory_broker
    viewer = django_user_model.objects.create_user("vera", password="vera-pass-123")
    set_role(viewer, VIEWER)
    viewer.user_permissions.add(Permission.objects.get(codename=EXPORT))
    store_letter(memory_place(memory_broker), b'{"card": "4111111111111111"}')
    do_set_redaction_rule(actor=admin, kind="regex", pattern=r"4111\d{12}")
    masked = downloaded(_client(viewer).get("/api/letters/export/", {"format": "jsonl"}))

    result = _import(_client(admin), broker, masked).json()
    assert (result["imported"], result["masked"]) == (1, 1)
    (letter,) = DeadLetter.objects.filter(place_id=result["place"])
    assert letter.quarantined_at is not None and b"4111111111111111" not in letter.body_bytes
    with pytest.raises(JobError, match="masked"):
        request_job("replay", actor=operator, reason="try", ids=[letter.pk])
    release = {"reason": "checked: the body is what we want to send"}
    assert _client(operator).post(f"/api/letters/{letter.pk}/release/", release,
                                            format="json").status_code == 403
    assert _client(admin).post(f"/api/letters/{letter.pk}/release/", release, format="json").status_code == 200
    assert request_job("replay", actor=operator, reason="confirmed", ids=[letter.pk]).kind == "replay"


def test_only_an_admin_of_every_place_imports(exported, memory_broker, operator, django_user_model):
    _, broker = memory_broker
    assert _import(_client(operator), broker, exported).status_code == 403
    limited = django_user_model.objects.create_user("lim", password="lim-pass-123")
    set_role(limited, ADMIN)
    RoleScope.objects.create(user=limited, place=DeadPlace.objects.first())
    assert _import(_client(limited), broker, exported).status_code in (403, 404)
    assert not DeadPlace.objects.filter(kind="imported").exists()


@pytest.mark.role("admin")
def test_an_admin_imports_from_the_page(exported, memory_broker, signed_in):
    _, broker = memory_broker
    answer = signed_in.post(reverse("imports"), {
        "file": SimpleUploadedFile("prod.jsonl", exported + b"[]\n"), "broker": broker.pk, "place": "from-prod",
        "reason": "reproduce INC-7"})
    page = answer.content.decode()
    assert answer.status_code == 200 and "<strong>2</strong> letters imported" in page
    assert "line 4: not a letter" in page
    assert json.loads(exported.splitlines()[0])["export"]["reader"] in page


def test_a_line_too_long_is_refused_without_being_held(exported, memory_broker, admin, monkeypatch):
    from console.services import letter_import

    _, broker = memory_broker
    meta, first, second = exported.splitlines()
    monkeypatch.setattr(letter_import, "MAX_LINE", max(len(first), len(second)) + 10)
    data = b"\n".join([meta, first, b'{"body": "' + b"x" * (3 * letter_import.MAX_LINE) + b'"}', second]) + b"\n"
    result = _import(_client(admin), broker, data).json()
    assert (result["imported"], result["bad_lines"]) == (2, 1)
    assert result["refused"][0]["line"] == 3 and "longer than" in result["refused"][0]["error"]
    assert result["sha256"] == hashlib.sha256(data).hexdigest()
