"""Compressed letters (gzip, deflate, zstd, said by the AMQP ``content_encoding``) captured
from a real RabbitMQ go back byte for byte, with their encoding, when replayed, and when
edited-and-replayed from the letter's page without an edit; an edit in the box, which shows the
body decoded, is sent compressed again with the letter's own encoding."""

from __future__ import annotations

import gzip
import json
import zlib

import pytest
import zstandard
from django.urls import reverse

from console.jobs import tasks
from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.letters import compression
from console.models import AuditEvent, Job

pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db]

ORDER = {"order": 1006, "sku": "gift-wrap-777", "qty": 1}
PACK = {"gzip": lambda body: gzip.compress(body, mtime=1700000000), "deflate": zlib.compress,
        "zstd": zstandard.ZstdCompressor(level=7).compress}
UNPACK = {"gzip": gzip.decompress, "deflate": zlib.decompress, "zstd": zstandard.ZstdDecompressor().decompress}


@pytest.fixture
def letters(captured):
    """One captured letter per encoding, their bodies packed as their senders packed them."""
    sent = {encoding: pack(json.dumps({**ORDER, "encoding": encoding}).encode()) for encoding, pack in PACK.items()}
    work, _, taken = captured("packed", [(body, {"x-tenant": "acme"}, {"content_encoding": encoding})
                                         for encoding, body in sent.items()])
    return work, sent, dict(zip(sent, taken, strict=True))


def test_a_replay_sends_the_stored_bytes_and_encoding(kit, letters, operator):
    work, sent, by_encoding = letters
    assert {e: letter.body_bytes for e, letter in by_encoding.items()} == sent
    ids = [letter.pk for letter in by_encoding.values()]
    job = request_job("replay", actor=operator, reason="replay packed", ids=ids)
    assert run_job(job.pk) == "succeeded"
    back = kit.drain(work)
    assert [(m.body, m.content_encoding) for m in back] == [(sent[e], e) for e in PACK]


def _edit_and_replay(client, letter, body: str) -> None:
    """Send the letter page's edit box as a browser does and run the replay job it asks for."""
    response = client.post(reverse("letter-edit", args=[letter.pk]), {
        "body": body.replace("\n", "\r\n"), "body_encoding": "text", "headers": json.dumps(letter.headers),
        "reason": "fix the quantity", "confirmed": "1"})
    job = Job.objects.get(kind="edit_replay", pk=int(response["Location"].rstrip("/").rsplit("/", 1)[1]))
    assert run_job(job.pk) == "succeeded"


@pytest.fixture
def editing(client, operator, monkeypatch):
    monkeypatch.setattr(tasks.run_job, "delay", lambda job_id: None)  # the test runs the job itself
    client.force_login(operator)
    return client


def test_an_unedited_box_sends_the_letters_own_bytes(kit, letters, editing):
    work, sent, by_encoding = letters
    for letter in by_encoding.values():
        page = editing.get(reverse("letter", args=[letter.pk])).content.decode()
        assert "gift-wrap-777" in page and 'id="edit-compression"' in page
        decoded = compression.read(letter.body_bytes, letter.properties, letter.headers)
        shown = json.dumps(json.loads(decoded.body), indent=2)  # what the box holds
        _edit_and_replay(editing, letter, shown)
    back = kit.drain(work)
    assert [(m.body, m.content_encoding) for m in back] == [(sent[e], e) for e in PACK]


def test_an_edited_body_is_sent_compressed_again_with_the_same_encoding(kit, letters, editing):
    work, sent, by_encoding = letters
    for encoding, letter in by_encoding.items():
        edited = json.dumps({**ORDER, "encoding": encoding, "qty": 2}, indent=2)
        _edit_and_replay(editing, letter, edited)
        diff = AuditEvent.objects.filter(action="edit_replay").latest("id").details["body"]["diff"]
        assert '"qty": 1' in diff and '"qty":2' in diff  # the audit compares the decoded bodies
    back = kit.drain(work)
    assert [m.content_encoding for m in back] == list(PACK)
    for encoding, message in zip(PACK, back, strict=True):
        assert message.body != sent[encoding]
        assert UNPACK[encoding](message.body) == json.dumps({**ORDER, "encoding": encoding, "qty": 2},
                                                            separators=(",", ":")).encode()
