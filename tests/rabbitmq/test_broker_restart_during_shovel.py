"""RabbitMQ restarted in the middle of a shovel job: the job waits for the broker with a clear
status, follows its shovel again once the broker is back (RabbitMQ restarts a dynamic shovel
with its node), and ends with the counts proving that everything it counted was moved. A
shovel delivers at least once: the messages it had in flight when the broker went down may
arrive twice, as many as its window at most, and the job says how many.

The restarted broker is a private node with the management API and the shovel, never the
shared one."""

from __future__ import annotations

import aio_pika
import pytest

from console.jobs.door.requests import request_job
from console.models import AuditEvent, DeadPlace, Job
from console.services.brokers import do_add_broker

pytestmark = [pytest.mark.slow, pytest.mark.rabbitmq, pytest.mark.django_db(transaction=True)]

MESSAGES = 60_000


@pytest.mark.parametrize("private_rabbit", [{"management": True}], indirect=True)
def test_a_shovel_waits_out_a_broker_restart_and_moves_exactly_what_it_counted(
        private_rabbit, private_kit, watch, operator):
    kit = private_kit
    dlq = kit.queue(kit.name("invoices") + ".dlq", durable=True)
    target = kit.queue(kit.name("invoices-retry"), durable=True)
    kit.publish_many(dlq, [aio_pika.Message(b"invoice %d" % i, delivery_mode=2) for i in range(MESSAGES)])
    kit.wait_depth(dlq, MESSAGES)
    broker = do_add_broker(actor="tests", name=f"private-{kit.suffix}", kind="rabbitmq", url=private_rabbit.url,
                           management_url=private_rabbit.management_url)
    place = DeadPlace.objects.create(broker=broker, name=dlq, scope="/", kind="queue")

    job = request_job("shovel", place=place, target=target, actor=operator, reason="outage test: move them back")
    kit.wait_for(lambda: kit.depth(target) > 0, "the shovel to start moving", seconds=60)
    private_rabbit.stop()
    watch.wait(job, lambda: job.status == Job.Status.WAITING or job.is_finished, "the job to wait for the broker")
    assert job.status == Job.Status.WAITING, watch.explain(job, "the job did not wait for the broker")
    assert job.error, watch.explain(job, "waiting without saying why")
    private_rabbit.start()
    kit.reconnect()

    watch.finish(job)
    assert job.status == Job.Status.SUCCEEDED, watch.explain(job, "the shovel job did not succeed")
    sent_twice = AuditEvent.objects.get(job_id=job.pk, outcome="verified").details["sent_twice"]
    assert (kit.depth(dlq), kit.depth(target)) == (0, MESSAGES + sent_twice)
    assert 0 <= sent_twice <= 1000 and job.done == MESSAGES
    messages = [line["message"] for line in job.log]
    assert any(m.startswith("broker unavailable, waiting:") for m in messages), watch.explain(job, "no waiting line")
    if sent_twice:
        assert any(f"gained {sent_twice} more" in m and "nothing was lost" in m for m in messages), \
            watch.explain(job, "copies sent twice, unexplained")
    print(f"sent twice: {sent_twice}; job log:\n" + "\n".join(messages))
