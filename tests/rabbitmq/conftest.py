"""Fixtures for the tests against the real RabbitMQ (127.0.0.1:5672, management on 15672)."""

from __future__ import annotations

import pytest

from console.brokers.base import BrokerConfig
from console.brokers.rabbitmq.adapter import RabbitMQAdapter
from tests.rabbitmq.kit import AMQP_URL, MANAGEMENT_URL, PASSWORD, USER, RabbitKit


def rabbit_config(**changes) -> BrokerConfig:
    values = dict(kind="rabbitmq", url=AMQP_URL, management_url=MANAGEMENT_URL, username=USER, password=PASSWORD)
    values.update(changes)
    return BrokerConfig(**values)


@pytest.fixture
def kit():
    """Declares this test's queues, exchanges and policies, and deletes them afterwards."""
    helper = RabbitKit()
    yield helper
    helper.close()


@pytest.fixture
def adapter():
    with RabbitMQAdapter(rabbit_config()) as rabbit:
        yield rabbit


@pytest.fixture
def rabbit_broker(kit):
    """A Broker row for the local RabbitMQ, added through the service (credentials in the URL,
    as an operator would paste them)."""
    from console.services.brokers import do_add_broker

    return do_add_broker(
        actor="tests", name=f"rabbit-{kit.suffix}", kind="rabbitmq",
        url=f"amqp://{USER}:{PASSWORD}@127.0.0.1:5672/%2F", management_url=MANAGEMENT_URL,
    )


@pytest.fixture
def captured(kit, rabbit_broker, operator):
    """A factory: messages published to a fresh work queue, rejected by its consumer into
    ``<work>.dlq``, discovered and captured through the services. Returns (work queue, dead
    place, letters in publish order)."""
    from console.jobs.door.requests import request_job
    from console.jobs.door.runner import run_job
    from console.models import DeadLetter
    from console.services.brokers import do_discover

    def make(base: str, messages: list[tuple]):
        dlq = kit.queue(kit.name(base) + ".dlq")
        work = kit.queue(kit.name(base), {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})
        for body, headers, *properties in messages:  # (body, headers[, properties])
            kit.publish(work, body, headers=headers, **(properties[0] if properties else {}))
        kit.reject(work, count=len(messages))
        kit.wait_depth(dlq, len(messages))
        (place,) = [p for p in do_discover(rabbit_broker, actor=operator) if p.name == dlq]
        job = request_job("capture", place=place, actor=operator, reason="triage")
        assert run_job(job.pk) == "succeeded"
        return work, place, list(DeadLetter.objects.filter(place=place).order_by("id"))

    return make


@pytest.fixture
def killer(filesystem_transport, tmp_path, settings):
    """A real worker on this test's task folder, and what kills it mid-job (tests.rabbitmq.crash)."""
    from tests.rabbitmq.crash import STALE_SECONDS, Killer, worker_settings
    from tests.workers import Worker

    settings.DLO_JOB_STALE_SECONDS = STALE_SECONDS  # what resume_stale_jobs calls stale, here
    worker = Worker(filesystem_transport, tmp_path / "worker.log", **worker_settings())
    yield Killer(worker)
    worker.kill()
    _wait_for_killed_sessions()


def _wait_for_killed_sessions(seconds: float = 30) -> None:
    """Until no other session of the test database runs a statement: a backend whose client was
    killed mid-statement (the search rows' fill of 10,000 letters) finishes that statement
    first, and the test's flush would deadlock with it."""
    import time

    from django.db import connection

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                           "AND pid <> pg_backend_pid() AND state <> 'idle'")
            if not cursor.fetchone()[0]:
                return
        time.sleep(0.1)


# -- a broker of the test's own, to stop and start (tests.rabbitmq.private_node) ----------------

@pytest.fixture
def private_rabbit(request, tmp_path):
    """A private RabbitMQ node; ``@pytest.mark.parametrize("private_rabbit", [{"management": True}],
    indirect=True)`` gives it the management API and the shovel."""
    from tests.rabbitmq.private_node import PrivateRabbit

    node = PrivateRabbit(tmp_path / "rabbit", **getattr(request, "param", {}))
    try:
        node.start()
        yield node
    finally:
        node.close()


@pytest.fixture
def private_kit(private_rabbit):
    helper = RabbitKit(port=private_rabbit.port)
    yield helper
    helper.close()


@pytest.fixture
def watch(filesystem_transport, tmp_path):
    """A real worker that waits up to two minutes for a broker, and a watch on its jobs."""
    from tests.rabbitmq.crash import BATCH_SIZE
    from tests.workers import JobWatch, Worker

    worker = Worker(filesystem_transport, tmp_path / "worker.log",
                    DLO_BATCH_SIZE=str(BATCH_SIZE), DLO_BROKER_WAIT_SECONDS="120")
    worker.start()
    yield JobWatch(worker, wait_seconds=120)
    worker.kill()


@pytest.fixture
def operator_api(operator):
    """The REST API as olga (token-less: forced authentication, as tests/api does)."""
    from rest_framework.test import APIClient

    client = APIClient()
    client.force_authenticate(operator)
    return client


@pytest.fixture
def rounds(operator):
    """What a person does in the console, one job at a time: ``capture(place)`` and ``replay(ids)``,
    each run to success by the job runner (standing in for the worker)."""
    from console.jobs.door.requests import request_job
    from console.jobs.door.runner import run_job

    class Rounds:
        @staticmethod
        def capture(place) -> None:
            job = request_job("capture", place=place, actor=operator, reason="triage")
            assert run_job(job.pk) == "succeeded"

        @staticmethod
        def replay(ids: list[int]) -> None:
            job = request_job("replay", actor=operator, reason="fixed, try again", ids=ids)
            assert run_job(job.pk) == "succeeded"

    return Rounds()
