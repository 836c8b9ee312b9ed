"""NUL characters, which PostgreSQL's text and JSON cannot hold, in a message's headers, header
names, message id and failure text: the capture still takes the letter, the page shows the NUL
as a visible escape, and a replay sends the header values back exactly as they came."""

from __future__ import annotations

import pytest

from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.letters.values import display, from_json

pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db]

HOSTILE = "drop\x00table"


def test_nul_in_headers_and_ids_is_captured_shown_and_replayed_exactly(kit, captured, operator, client):
    headers = {"note": HOSTILE, "list": ["a\x00", "b"], "x-exception-message": f"bad {HOSTILE}",
               "key\x00name": "v"}
    work, place, (letter,) = captured("nul", [(b"body", headers)])

    assert from_json(letter.headers)["note"] == HOSTILE
    assert from_json(letter.headers)["list"] == ["a\x00", "b"]
    assert display(letter.headers["note"]) == "drop\\x00table"
    assert letter.exception_message == "bad drop\\x00table"
    assert "key\\x00name" in from_json(letter.headers)  # a name cannot be tagged: shown escaped

    client.force_login(operator)
    page = client.get(f"/letters/{letter.pk}/").content.decode()
    assert "drop\\x00table" in page and "\x00" not in page

    job = request_job("replay", actor=operator, reason="replay nul", ids=[letter.pk])
    assert run_job(job.pk) == "succeeded"
    (back,) = kit.drain(work)
    assert back.body == b"body"
    assert back.headers["note"] == HOSTILE and back.headers["list"] == ["a\x00", "b"]


def test_a_message_id_of_nuls_still_fits_its_column(captured):
    _, _, (letter,) = captured("nul-id", [(b"body", {}, {"message_id": "\x00" * 200})])
    assert letter.message_id == ("\\x00" * 200)[:500]
    assert from_json(letter.properties)["message_id"] == "\x00" * 200
