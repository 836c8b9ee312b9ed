"""Issue 48's round trip on real RabbitMQ: letters captured here are exported as JSON Lines,
imported into a second console (its own database, web process and worker, spoken to over HTTP)
into an imported place of its RabbitMQ, and replayed from there to their origin queue: the
consumer receives the same bytes, headers and content type. A bad line is reported by its number
while the rest goes in; a masked reader's export comes in quarantined, refused for replay until
an admin releases it."""

from __future__ import annotations

import json
import time

import pytest
from rest_framework.test import APIClient

from tests.exports.helpers import downloaded
from tests.rabbitmq.kit import MANAGEMENT_URL, PASSWORD, USER
from tests.second_console import started

pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db]


@pytest.fixture
def second(tmp_path):
    yield from started(tmp_path)


def _job_done(console, job_id: int, seconds: float = 90) -> dict:
    deadline = time.monotonic() + seconds
    while True:
        job = console.client.get(f"/api/jobs/{job_id}/").json()
        if job["status"] in ("succeeded", "failed", "partly_failed", "cancelled", "refused"):
            return job
        assert time.monotonic() < deadline, job
        time.sleep(0.3)


def test_letters_exported_here_replay_from_another_console(captured, operator, kit, second):
    binary = bytes(range(256))
    work, _, letters = captured("roundtrip", [
        (binary, {"x-tenant": "acme", "x-raw": bytearray(b"\x00\x01\xfe")}, {"content_type": "application/x-thing"}),
        (json.dumps({"order": "A-1", "note": "=1+1"}).encode(), {"x-attempt": 3}, {"content_type": "application/json"}),
    ])
    api = APIClient()
    api.force_authenticate(operator)
    export = downloaded(api.get("/api/letters/export/", {"format": "jsonl", "origin": work}))
    assert len(export.splitlines()) == 3  # the meta and two letters

    made = second.client.post("/api/brokers/", json={
        "name": "staging-rabbit", "kind": "rabbitmq", "url": "amqp://127.0.0.1:5672/%2F",
        "management_url": MANAGEMENT_URL, "username": USER, "password": PASSWORD})
    assert made.status_code == 201, made.text
    broken = export + b'{"id": 99, "body_encoding": "base64", "body": "not base64!"}\n'
    imported = second.client.post("/api/imports/", params={"broker": made.json()["id"], "place": "from-prod",
                                                           "file_name": "prod.jsonl"},
                                  content=broken, headers={"Content-Type": "application/jsonl"})
    assert imported.status_code == 201, imported.text
    result = imported.json()
    assert (result["imported"], result["bad_lines"], result["masked"]) == (2, 1, 0)
    assert result["refused"][0]["line"] == 4 and result["exported_by"] == operator.username

    shown = second.client.get("/api/letters/", params={"place": result["place"]}).json()["results"]
    assert sorted(row["origin_queue"] for row in shown) == [work, work]
    job = second.client.post("/api/jobs/", json={"action": "replay", "filter": {"place": str(result["place"])},
                                                 "reason": "reproduce on staging"})
    assert job.status_code == 202, job.text
    assert _job_done(second, job.json()["id"])["status"] == "succeeded"

    received = {message.body: message for message in kit.drain(work)}
    assert set(received) == {letter.body_bytes for letter in letters}
    first = received[binary]
    assert first.content_type == "application/x-thing"
    assert first.headers["x-tenant"] == "acme" and bytes(first.headers["x-raw"]) == b"\x00\x01\xfe"
    second_letter = received[letters[1].body_bytes]
    assert second_letter.content_type == "application/json" and second_letter.headers["x-attempt"] == 3
    audit = second.client.get("/api/audit/", params={"action": "letters.imported"}).json()["results"]
    assert audit and audit[0]["details"]["exported_by"] == operator.username
