"""Replay from the archive as a job: a job whose worker died goes on from its cursor, and a batch
published again carries the same replay ids; letters whose origin is gone are counted as refused."""

from __future__ import annotations

import pytest

from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import AuditEvent, Job
from console.pipeline.archive import archive
from console.services.custody import REPLAY_ID_HEADER, replay_id
from console.services.jobs import JobError

pytestmark = [pytest.mark.spark, pytest.mark.django_db]


def test_a_stopped_job_resumes_from_its_cursor_with_the_same_replay_ids(spark, lake, custody, memory_broker,
                                                                       operator, settings):
    fake, broker = memory_broker
    fake.queue("orders")
    settings.DLO_BATCH_SIZE = 2
    place = custody.place(broker, "orders.dlq")
    done = dict(state="replayed", resolved_days_ago=0)
    letters = [custody.letter(place, body=f"order {i}".encode(), captured_days_ago=2, **done) for i in range(3)]
    letters += [custody.letter(place, body=f"order {i}".encode(), **done) for i in range(3, 5)]
    lost = custody.letter(place, origin="gone", body=b"nowhere to go", **done)
    archive(lake, spark=spark)

    with pytest.raises(JobError, match="not the whole archive"):
        request_job("archive_replay", actor=operator, reason="everything", lake=lake, run_here=True)
    job = request_job("archive_replay", actor=operator, reason="replay the week", lake=lake, since="2000-01-01",
                            run_here=True)
    # Its worker died after the first three letters, as the cursor and counters say.
    Job.objects.filter(pk=job.pk).update(status="running", heartbeat_at=None, cursor=3, done=3, total=6)
    assert run_job(job.pk) == "partly_failed"  # one letter of six could not go back

    job = Job.objects.get(pk=job.pk)
    assert (job.done, job.failed, job.skipped, job.cursor) == (5, 1, 0, 6)
    sent = list(fake.queue("orders"))
    assert [m.body for m in sent] == [b"order 3", b"order 4"]
    assert [m.headers[REPLAY_ID_HEADER] for m in sent] == [replay_id(job.pk, letter.id) for letter in letters[3:]]
    refused = AuditEvent.objects.get(action="archive_replay", job_id=job.pk, outcome="failed")
    assert refused.letter_ids == [lost.id] and "no queue named 'gone'" in refused.details["errors"][0]

    # A crash before the cursor moved: the batch goes again, with the same replay ids.
    Job.objects.filter(pk=job.pk).update(status="running", heartbeat_at=None, cursor=3)
    run_job(job.pk)
    again = list(fake.queue("orders"))[2:]
    assert [m.headers[REPLAY_ID_HEADER] for m in again] == [m.headers[REPLAY_ID_HEADER] for m in sent]
