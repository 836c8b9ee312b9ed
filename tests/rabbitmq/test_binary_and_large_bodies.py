"""Bodies that are not text, binary header values and a 5 MiB body survive capture, custody in
PostgreSQL and replay, byte for byte."""

from __future__ import annotations

import os

import pytest

from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.letters.values import from_json

pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db]

BINARY = bytes(range(256)) + b"\xff\xfe\x00\xc3\x28"  # every byte value, then invalid UTF-8
LARGE = os.urandom(5 * 1024 * 1024)


def test_binary_and_large_messages_come_back_exactly(kit, captured, operator):
    headers = {"signature": bytearray(b"\x00\x9f\xff"), "note": "caf\u00e9 <script>"}
    work, place, letters = captured("blobs", [(BINARY, headers), (LARGE, {})])

    binary, large = letters
    assert (binary.body_bytes, large.body_bytes) == (BINARY, LARGE)
    assert from_json(binary.headers)["signature"] == b"\x00\x9f\xff"
    assert from_json(binary.headers)["note"] == "caf\u00e9 <script>"

    job = request_job("replay", actor=operator, reason="replay blobs", ids=[binary.id, large.id])
    assert run_job(job.pk) == "succeeded"

    back = kit.drain(work)
    assert [m.body for m in back] == [BINARY, LARGE]
    assert bytes(back[0].headers["signature"]) == b"\x00\x9f\xff"
    assert back[0].headers["note"] == "caf\u00e9 <script>"
