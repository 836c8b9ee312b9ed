"""Replay from the archive on the real RabbitMQ: the chosen archived letters go back to their
origin queue with replay ids, as a job with counters and audit rows."""

from __future__ import annotations

from datetime import timedelta

import pytest

from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import AuditEvent, Job
from console.pipeline.archive import archive
from console.services.custody import REPLAY_ID_HEADER, replay_id
from tests.pipeline.conftest import NOW
from tests.rabbitmq.kit import MANAGEMENT_URL, PASSWORD, USER, RabbitKit

pytestmark = [pytest.mark.spark, pytest.mark.rabbitmq, pytest.mark.django_db]


@pytest.fixture
def kit():
    helper = RabbitKit()
    yield helper
    helper.close()


def test_replay_from_archive_reaches_the_origin_queue(spark, lake, custody, kit, operator):
    origin = kit.queue(kit.name("pipeline-orders"))
    other = kit.queue(kit.name("pipeline-other"))
    broker = custody.broker(name=f"rabbit-{kit.suffix}", kind="rabbitmq",
                            url=f"amqp://{USER}:{PASSWORD}@127.0.0.1:5672/%2F", management_url=MANAGEMENT_URL)
    place = custody.place(broker, kit.name("pipeline-orders.dlq"), scope="/")
    done = dict(state="replayed", resolved_days_ago=1)
    wanted = [
        custody.letter(place, origin=origin, body=b'{"order": 1}', captured_days_ago=3,
                       headers={"tenant": "acme"}, **done),
        custody.letter(place, origin=origin, body=b'{"order": 2}', captured_days_ago=2, **done),
        custody.letter(place, origin=origin, body=b'{"order": 3}', captured_days_ago=2, **done),
    ]
    still_held = custody.letter(place, origin=origin, body=b"held", captured_days_ago=2)
    custody.letter(place, origin=origin, body=b"too old", captured_days_ago=9, **done)
    custody.letter(place, origin=other, body=b"other queue", captured_days_ago=2, **done)
    archive(lake, spark=spark)

    job = request_job("archive_replay", actor=operator, reason="replay last week's orders", lake=lake, origin=origin,
                            since=str(NOW.date() - timedelta(days=3)), until=str(NOW.date()),
                            rate_limit=100, run_here=True)
    assert run_job(job.pk) == "succeeded"

    job = Job.objects.get(pk=job.pk)
    assert (job.kind, job.total, job.done, job.failed, job.skipped, job.cursor) == ("archive_replay", 4, 3, 0, 1, 4)
    back = kit.drain(origin)
    assert [m.body for m in back] == [b'{"order": 1}', b'{"order": 2}', b'{"order": 3}']
    assert [m.headers[REPLAY_ID_HEADER] for m in back] == [replay_id(job.pk, letter.id) for letter in wanted]
    assert back[0].headers["tenant"] == "acme"
    assert kit.depth(other) == 0
    confirmed = AuditEvent.objects.filter(action="archive_replay", job_id=job.pk, outcome="confirmed")
    assert sorted(i for event in confirmed for i in event.letter_ids) == [letter.id for letter in wanted]
    assert {event.target for event in confirmed} == {origin}
    assert still_held.id not in {i for event in confirmed for i in event.letter_ids}
