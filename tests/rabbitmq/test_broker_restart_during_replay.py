"""RabbitMQ restarted in the middle of a replay: the job says it is waiting for the broker
(status ``waiting``, a line in its log), goes on by itself once the broker is back, and loses
nothing. The only duplicates are copies of the batch in flight when the broker went away,
under their letters' replay ids.

The restarted broker is a private node (tests.rabbitmq.private_node), never the shared one."""

from __future__ import annotations

from functools import partial

import pytest

from console.jobs.door.requests import request_job
from console.models import DeadPlace, Job
from console.services.brokers import do_add_broker
from tests.rabbitmq.crash import BATCH_SIZE, arrivals, assert_replayed, dead_letter_numbered, dead_queue

pytestmark = [pytest.mark.slow, pytest.mark.rabbitmq, pytest.mark.django_db(transaction=True)]

LETTERS = 4000


def test_a_replay_waits_out_a_broker_restart_and_loses_nothing(private_rabbit, private_kit, watch, operator):
    kit = private_kit
    # Durable queues and persistent messages (``numbered``): what a restart must not lose.
    work, dlq = dead_queue(kit, durable=True)
    dead_letter_numbered(kit, work, dlq, 0, LETTERS)
    broker = do_add_broker(actor="tests", name=f"private-{kit.suffix}", kind="rabbitmq", url=private_rabbit.url)
    # Declared by hand: discovery needs the management API, which the private node has not.
    place = DeadPlace.objects.create(broker=broker, name=dlq, kind="queue", origins=[work])
    capture = watch.finish(request_job("capture", place=place, actor=operator, reason="outage test: take them in"))
    assert capture.status == Job.Status.SUCCEEDED, watch.explain(capture, "the capture failed")

    job = request_job("replay", actor=operator, reason="outage test: replay", filter={"place": place.pk})
    watch.wait(job, lambda: job.done >= 2 * BATCH_SIZE or job.is_finished, "the replay to get going")
    assert not job.is_finished, watch.explain(job, "the replay ended before the broker could be stopped")
    private_rabbit.stop()
    job.refresh_from_db()
    stopped_at = job.done
    watch.wait(job, lambda: job.status == Job.Status.WAITING or job.is_finished, "the job to wait for the broker")
    assert job.status == Job.Status.WAITING, watch.explain(job, "the job did not wait for the broker")
    assert "lost the connection" in job.error or "cannot reach" in job.error, watch.explain(job, "no clear error")
    private_rabbit.start()
    kit.reconnect()

    watch.finish(job)
    assert job.status == Job.Status.SUCCEEDED, watch.explain(job, "the replay did not succeed")
    assert job.error == ""
    messages = [line["message"] for line in job.log]
    assert any(m.startswith("broker unavailable, waiting:") for m in messages), watch.explain(job, "no waiting line")
    assert "broker is back, going on" in messages, watch.explain(job, "no line saying the broker came back")
    assert job.done == LETTERS
    duplicates = assert_replayed(place, arrivals(kit, work), allowed_duplicates=2 * BATCH_SIZE,
                                 explain=partial(watch.explain, job))
    print(f"{LETTERS} letters, broker stopped at {stopped_at} replayed, {duplicates} duplicates; job log:\n"
          + "\n".join(messages))
