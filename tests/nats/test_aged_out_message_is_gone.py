"""A dead message that left its stream before the capture (aged out, deleted) is reported as
gone: the death is recorded, the job succeeds, and a replay says there is nothing to send."""

from __future__ import annotations

import time

import pytest

from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import Job
from tests.nats.flow import capture, discover_place, letters_of

pytestmark = [pytest.mark.nats, pytest.mark.django_db]


def test_a_message_deleted_by_hand_is_captured_as_gone(nats_broker, failing_consumer):
    source = failing_consumer()
    seq = source.publish(b"soon deleted")
    source.publish(b"still here")
    source.fail_until_dead(2)
    source.nats(lambda js: js.delete_msg(source.stream, seq))

    place = discover_place(nats_broker, source)
    job = capture(place)
    assert (job.status, job.done) == ("succeeded", 2)
    gone, kept = letters_of(place)
    assert (gone.reason, gone.body_bytes, gone.envelope_details["gone"]) == ("gone", b"", True)
    assert gone.envelope_details["died_by"] == "max_deliver"
    assert gone.message_id == f"{source.stream}:{seq}" and gone.origin_queue == source.consumer
    assert (kept.reason, kept.body_bytes) == ("max_deliver", b"still here")

    replay = request_job("replay", actor="tests", reason="try", ids=[gone.id])
    run_job(replay.pk)
    replay = Job.objects.get(pk=replay.pk)
    assert (replay.done, replay.failed) == (0, 1)
    assert any("aged out of its stream" in entry["message"] for entry in replay.log)
    gone.refresh_from_db()
    assert gone.state == "held"


def test_a_message_that_aged_out_of_its_stream_is_gone_not_an_error(nats_broker, failing_consumer):
    source = failing_consumer(max_age=1.0)
    source.publish(b"short-lived")
    source.fail_until_dead(1)
    deadline = time.monotonic() + 10
    while source.nats(lambda js: js.stream_info(source.stream)).state.messages and time.monotonic() < deadline:
        time.sleep(0.1)

    place = discover_place(nats_broker, source)
    job = capture(place)
    assert (job.status, job.done) == ("succeeded", 1)
    (letter,) = letters_of(place)
    assert (letter.reason, letter.body_bytes, letter.envelope_details["gone"]) == ("gone", b"", True)
