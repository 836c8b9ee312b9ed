"""Binary bodies, hostile headers and bodies near the server's 1 MiB max_payload go through
capture and replay byte for byte; one too big to republish is refused clearly, not sent."""

from __future__ import annotations

import pytest

from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import Job
from tests.nats.flow import capture, discover_place, letters_of, replay

pytestmark = [pytest.mark.nats, pytest.mark.django_db]

EVERY_BYTE = bytes(range(256)) * 4
HOSTILE = {"x-note": "<script>alert('x')</script>", "x-utf8": "Grüße, 東京 ✓", "X-Case": "Kept"}


def test_binary_body_and_headers_survive_capture_and_replay(nats_broker, failing_consumer):
    source = failing_consumer()
    source.publish(EVERY_BYTE, headers=HOSTILE)
    source.fail_until_dead(1)
    place = discover_place(nats_broker, source)
    capture(place)
    (letter,) = letters_of(place)
    assert letter.body_bytes == EVERY_BYTE
    assert letter.headers == HOSTILE

    replay([letter])
    (again,) = source.fetch()
    assert again.data == EVERY_BYTE
    assert {k: again.headers[k] for k in HOSTILE} == HOSTILE


def test_header_bytes_that_are_not_utf8_are_kept_as_bytes(nats_broker, failing_consumer):
    source = failing_consumer()
    source.publish_raw_headers(b"\x00\xff body", [b"x-latin1: caf\xe9", b"x-dup: one", b"x-dup: two"])
    before = source.nats(lambda js: js.stream_info(source.stream)).state.messages
    assert before == 1
    source.fail_until_dead(1)
    place = discover_place(nats_broker, source)
    capture(place)
    (letter,) = letters_of(place)
    assert letter.body_bytes == b"\x00\xff body"
    assert letter.headers == {"x-latin1": {"$bytes": "Y2Fm6Q=="}, "x-dup": ["one", "two"]}

    replay([letter])  # nats-py sends text headers only: the bytes go as UTF-8 with replacement
    (again,) = source.fetch()
    assert again.data == b"\x00\xff body"
    assert again.headers["x-latin1"] == "caf\ufffd" and again.headers["x-dup"] == "one, two"


def test_a_body_near_one_mib_survives_and_one_that_cannot_be_republished_is_refused(nats_broker, failing_consumer):
    source = failing_consumer()
    limit = source.nats.client.max_payload  # 1 MiB on a default server, headers included
    near = bytes(i * 7 % 256 for i in range(limit - 4096))
    full = bytes(i * 13 % 256 for i in range(limit))  # fits only without any header
    source.publish(near)
    source.publish(full)
    source.fail_until_dead(2)

    place = discover_place(nats_broker, source)
    capture(place)
    near_letter, full_letter = letters_of(place)
    assert near_letter.body_bytes == near and full_letter.body_bytes == full

    replay([near_letter])
    (again,) = source.fetch()
    assert again.data == near

    job = request_job("replay", actor="tests", reason="try", ids=[full_letter.id])
    run_job(job.pk)
    job = Job.objects.get(pk=job.pk)
    assert (job.status, job.done, job.failed) == ("failed", 0, 1)
    assert any("exceed the server's max_payload" in entry["message"] for entry in job.log)
    full_letter.refresh_from_db()
    assert full_letter.state == "held"
    assert source.stored(full_letter.envelope_details["stream_seq"]) is not None  # original untouched
