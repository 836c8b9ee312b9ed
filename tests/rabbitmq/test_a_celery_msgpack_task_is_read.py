"""Issue 47 against the real RabbitMQ: a real Celery app whose task_serializer is msgpack sends
a task; its consumer rejects it and RabbitMQ dead-letters it; the console captures it and its
page and API show the task's arguments, read from MessagePack. A pickled Celery task beside it is
shown disassembled, never loaded: its __reduce__ would write a file, and no file is written."""

from __future__ import annotations

import os

import pytest
from celery import Celery
from django.urls import reverse
from kombu import Exchange, Queue

from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import DeadLetter
from console.services.brokers import do_discover
from tests.rabbitmq.kit import AMQP_URL

pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db]


class WritesAFile:
    def __init__(self, path) -> None:
        self.path = str(path)

    def __reduce__(self):
        return (os.system, (f"touch {self.path}",))


def _app(serializer: str) -> Celery:
    # Not the current app: the console's own tasks (current_app, shared tasks) must not follow it.
    app = Celery("shop", broker=AMQP_URL, set_as_current=False)
    app.conf.update(task_serializer=serializer, accept_content=[serializer], broker_connection_retry=False)
    return app


def test_celery_tasks_in_msgpack_and_pickle_are_read_and_never_loaded(kit, rabbit_broker, operator, signed_in,
                                                                      tmp_path):
    dlq = kit.queue(kit.name("charges") + ".dlq")
    work = kit.queue(kit.name("charges"), {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})
    queue = Queue(work, Exchange(""), routing_key=work, no_declare=True)
    packed = _app("msgpack")
    packed.send_task("shop.charge", args=[42, "EUR"], kwargs={"retry": True}, queue=queue)
    pickled = _app("pickle")
    target = tmp_path / "pwned"
    pickled.send_task("shop.charge", args=[WritesAFile(target)], queue=queue)
    packed.close()
    pickled.close()
    kit.reject(work, count=2)  # the worker's Reject(requeue=False): RabbitMQ dead-letters them
    kit.wait_depth(dlq, 2)
    (place,) = [p for p in do_discover(rabbit_broker, actor=operator) if p.name == dlq]
    assert run_job(request_job("capture", place=place, actor=operator, reason="triage").pk) == "succeeded"
    msgpack_letter, pickle_letter = DeadLetter.objects.filter(place=place).order_by("id")
    assert msgpack_letter.properties["content_type"] == "application/x-msgpack"

    page = signed_in.get(reverse("letter", args=[msgpack_letter.pk])).content.decode()
    assert "Stored as MessagePack; shown read, as JSON." in page
    decoded = signed_in.get(f"/api/letters/{msgpack_letter.pk}/").json()["decoded"]
    assert decoded["value"][:2] == [[42, "EUR"], {"retry": True}]  # Celery's protocol 2: args, kwargs, embed

    decoded = signed_in.get(f"/api/letters/{pickle_letter.pk}/").json()["decoded"]
    assert decoded["unsafe"] is True and "posix.system" in decoded["value"]["would_load"]
    assert "never loaded here" in signed_in.get(reverse("letter", args=[pickle_letter.pk])).content.decode()
    assert not target.exists()
