"""Broker passwords never appear in any API response, page, audit row, export or log line.

Three brokers with distinctive passwords: an in-memory one, the real RabbitMQ reached as a
user made for this test (deleted afterwards), and a RabbitMQ definition whose port is dead.
Discovery, check, capture and replay run with every logger at DEBUG; then every URL is read as
every role, and everything is searched for the passwords.
"""

from __future__ import annotations

import logging
import uuid

import httpx
import pytest

from console.brokers import BrokerError
from console.brokers.memory.adapter import MemoryBroker, Message
from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import AuditEvent, DeadLetter, Job, Origin
from console.services.brokers import check_broker, do_add_broker, do_discover, test_connection
from console.services.channels import do_add_channel
from console.services.objectives import do_set_objective
from console.services.redaction import do_set_redaction_rule
from console.services.saved_views import do_save_view
from tests.access.conftest import ROLES
from tests.access.test_every_url_by_role import every_url, filled
from tests.rabbitmq.kit import MANAGEMENT_URL, PASSWORD, USER, RabbitKit
from tests.web.factory import uploaded_mapping, uploaded_schema

pytestmark = [pytest.mark.slow, pytest.mark.django_db, pytest.mark.rabbitmq]

RUN = uuid.uuid4().hex[:8]
MEMORY_PASSWORD = f"Mem0ry-Pw-{RUN}"
RABBIT_PASSWORD = f"Rabb1t-Pw-{RUN}"
DOWN_PASSWORD = f"D0wn-Pw-{RUN}"
TYPED_PASSWORD = f"Typ3d-Pw-{RUN}"  # only ever typed into a connection test, never saved
PASSWORDS = (MEMORY_PASSWORD, RABBIT_PASSWORD, DOWN_PASSWORD, TYPED_PASSWORD)
LOGGERS = (None, "console", "aio_pika", "aiormq", "httpx", "httpcore", "celery", "django")


@pytest.fixture
def rabbit_user():
    """A RabbitMQ user with a distinctive password, made through the management API."""
    name = f"dlo-probe-{RUN}"
    with httpx.Client(base_url=MANAGEMENT_URL, auth=(USER, PASSWORD), timeout=10) as http:
        http.put(f"/api/users/{name}", json={"password": RABBIT_PASSWORD, "tags": "management"}).raise_for_status()
        http.put(f"/api/permissions/%2F/{name}",
                 json={"configure": ".*", "write": ".*", "read": ".*"}).raise_for_status()
        yield name
        http.delete(f"/api/users/{name}")


@pytest.fixture
def kit():
    helper = RabbitKit()
    yield helper
    helper.close()


def _without_passwords(where: str, text: str) -> None:
    for password in PASSWORDS:
        assert password not in text, f"{password} appears in {where}"


def _body(response) -> str:
    if getattr(response, "streaming", False):
        return b"".join(response.streaming_content).decode("utf-8", "replace")
    return response.content.decode("utf-8", "replace")


def test_no_password_in_logs_pages_api_audit_or_exports(rabbit_user, kit, people, signed_in_as, caplog):
    for name in LOGGERS:
        caplog.set_level(logging.DEBUG, logger=name)
    MemoryBroker.instances.pop("pw", None)
    memory = MemoryBroker.named("pw")
    memory.queue("orders")
    memory.queue("orders.dlq").extend([Message(b"memory letter")])
    mem = do_add_broker(actor="tests", name="mem-pw", kind="memory", url="memory://pw", password=MEMORY_PASSWORD)
    rabbit = do_add_broker(actor="tests", name=f"rabbit-pw-{RUN}", kind="rabbitmq",
                           url=f"amqp://{rabbit_user}:{RABBIT_PASSWORD}@127.0.0.1:5672/%2F",
                           management_url=MANAGEMENT_URL)
    down = do_add_broker(actor="tests", name=f"down-pw-{RUN}", kind="rabbitmq",
                         url=f"amqp://{rabbit_user}:{DOWN_PASSWORD}@127.0.0.1:1/%2F",
                         management_url="http://127.0.0.1:1")
    operator = people["operator"]

    # A letter dead-lettered on the real RabbitMQ, then discovered, captured and replayed.
    dlq = kit.queue(kit.name("pw-orders") + ".dlq")
    work = kit.queue(kit.name("pw-orders"), {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})
    kit.publish(work, b'{"order": 7}', headers={"attempt": 1})
    kit.reject(work)
    kit.wait_depth(dlq, 1)
    for broker in (mem, rabbit):
        check_broker(broker)
        places = do_discover(broker, actor=operator)
        place = next(p for p in places if p.name in (dlq, "orders.dlq"))
        assert run_job(request_job("capture", place=place, actor=operator, reason="triage").pk) == "succeeded"
        letters = list(DeadLetter.objects.filter(place=place).values_list("id", flat=True))
        assert letters
        # Ran to its end (the in-memory origin may be gone: failed), its log and audit written.
        assert run_job(request_job("replay", actor=operator, reason="fixed", ids=letters).pk) in Job.FINISHED
    typed = {"kind": "rabbitmq", "url": "amqp://127.0.0.1:1/", "management_url": "http://127.0.0.1:1",
             "username": rabbit_user, "password": TYPED_PASSWORD}
    for failing in (lambda: check_broker(down), lambda: do_discover(down, actor=operator),
                    lambda: test_connection(actor=operator, **typed)):
        with pytest.raises(BrokerError):
            failing()
    # What a careless line of code might log: the mask catches it.
    logging.getLogger("console.careless").warning("connecting to amqp://%s:%s@host/ with %s",
                                                  rabbit_user, RABBIT_PASSWORD, f"{DOWN_PASSWORD} {TYPED_PASSWORD}")
    try:
        raise RuntimeError(f"login refused for password {MEMORY_PASSWORD}")
    except RuntimeError:
        logging.getLogger("console.careless").exception("failed")

    records = caplog.records
    assert any("login refused for password ***" in (r.exc_text or "") for r in records)
    assert any("amqp://***@host/" in r.getMessage() for r in records)
    assert any(r.name.startswith(("aio_pika", "aiormq")) for r in records), "the AMQP client logged nothing"
    for record in records:
        _without_passwords(f"log record {record.name}", f"{record.getMessage()} {record.exc_text or ''}")
    _without_passwords("the captured log", caplog.text)

    # Every page and API answer, as every role, for each broker.
    rule = do_set_redaction_rule(actor="tests", kind="regex", pattern=r"\d{16}")
    letter = DeadLetter.objects.filter(broker=rabbit).first()
    job = letter.last_job
    channel = do_add_channel(actor="tests", name="ops", kind="webhook", target="http://127.0.0.1:9/hook").pk
    view = do_save_view(actor=operator, name="rabbit's", filter={"broker": str(rabbit.pk)}, sharing="everyone").pk
    objective = do_set_objective(actor=operator, name="an hour", kind="oldest", seconds=3600, place=letter.place).pk
    for broker in (mem, rabbit, down):
        place = broker.places.first() or letter.place
        ids = {"broker_id": broker.pk, "place_id": place.pk, "letter_id": letter.pk, "job_id": job.pk,
               "rule_id": rule.pk, "redaction_rule_id": rule.pk, "user_id": operator.pk,
               "origin_id": Origin.objects.get(broker=letter.broker, name=letter.origin_queue).pk,
               "channel_id": channel, "fingerprint": letter.fingerprint, "view_id": view,
               "objective_id": objective,
               "body_schema_id": uploaded_schema().pk, "body_mapping_id": uploaded_mapping().pk}
        for role in ROLES:
            client = signed_in_as(people[role])
            for _, route in every_url():
                url = filled(route, ids)
                _without_passwords(f"GET {url} as {role}", _body(client.get(url)))
    for event in AuditEvent.objects.all():
        _without_passwords(f"audit event {event.pk}", repr(event.__dict__))
    assert AuditEvent.objects.filter(action="broker.add").count() == 3
    MemoryBroker.instances.pop("pw", None)
