"""A dead queue kept in custody on the real RabbitMQ: once an operator turns keeping on through
the API, each message that dies into it is in custody within seconds, without a click, taken by
the keeper process (``manage.py keep``); turning it off (audited) leaves the next ones on the
broker. A broker whose default keeps new places has a queue declared later found by the
scheduled discovery and kept."""

from __future__ import annotations

import time

import pytest
from rest_framework.test import APIClient

from console.jobs.automation.periodic import discover_brokers
from console.models import AuditEvent, DeadLetter, DeadPlace, Job
from console.services.brokers import do_discover

pytestmark = [pytest.mark.keeper, pytest.mark.rabbitmq, pytest.mark.django_db(transaction=True)]

#: The longest a letter may take from its death to custody (the issue's bound).
IN_CUSTODY_WITHIN = 5.0


def _dead_queue(kit, base: str) -> tuple[str, str]:
    dlq = kit.queue(kit.name(base + ".dlq"))
    work = kit.queue(kit.name(base), {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})
    return work, dlq


def _client(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def _held_by_the_keeper(kit, place: DeadPlace, keeper) -> None:
    """Until the keeper holds the place (its keep job runs and its reader consumes the queue):
    the bound is from death to custody, not the keeper process's start or its reader's first
    connection, which take longer on a machine busy with other tests. When it never does, the
    failure says what the keep jobs and the keeper's log were (once seen in CI, not yet here)."""
    try:
        kit.wait_for(lambda: Job.objects.filter(kind="keep", place=place, status="running").exists()
                     and kit.consumers(place.name) > 0, f"the keeper to hold {place}", seconds=60)
    except AssertionError as exc:
        jobs = list(Job.objects.filter(kind="keep", place=place).values_list("pk", "status", "error"))
        raise AssertionError(f"{exc}; keep jobs {jobs}; consumers {kit.consumers(place.name)}; keeper log:\n"
                             f"{keeper.log()}") from None


def _dies_and_is_kept(kit, work: str, place: DeadPlace, body: bytes) -> float:
    """Dead-letter one message and wait for it in custody; the seconds it took."""
    kit.publish(work, body)
    kit.reject(work)
    died = time.monotonic()
    while not DeadLetter.objects.filter(place=place, body=body).exists():
        assert time.monotonic() - died < IN_CUSTODY_WITHIN, (
            f"{body!r} not in custody {IN_CUSTODY_WITHIN}s after it died")
        time.sleep(0.05)
    return time.monotonic() - died


def test_letters_are_in_custody_seconds_after_they_die_until_keeping_is_turned_off(kit, rabbit_broker, operator,
                                                                                  keeper):
    work, dlq = _dead_queue(kit, "kept")
    (place,) = [p for p in do_discover(rabbit_broker, actor=operator) if p.name == dlq]
    api = _client(operator)
    answer = api.patch(f"/api/places/{place.pk}/", {"keep_in_custody": True, "reason": "orders fail at night"},
                       format="json")
    assert answer.status_code == 200, answer.content
    assert api.get(f"/api/places/{place.pk}/").json()["keep_in_custody"] is True
    keeper.start()
    _held_by_the_keeper(kit, place, keeper)

    took = [_dies_and_is_kept(kit, work, place, f"order {n}".encode()) for n in range(3)]
    print(f"death to custody: {', '.join(f'{t:.2f}s' for t in took)}")
    assert kit.depth(dlq) == 0
    job = Job.objects.get(kind="keep", place=place)
    assert (job.status, job.done, job.actor_name) == ("running", 3, "system:keeper")
    turned_on = AuditEvent.objects.get(action="place.keep", place_name=dlq)
    assert (turned_on.actor_name, turned_on.outcome, turned_on.reason) == ("olga", "on", "orders fail at night")

    answer = api.patch(f"/api/places/{place.pk}/", {"keep_in_custody": False}, format="json")
    assert answer.status_code == 200 and answer.json()["keep_in_custody"] is False
    kit.wait_for(lambda: Job.objects.get(pk=job.pk).status == "cancelled", "the keep job to end")
    kit.publish(work, b"after")
    kit.reject(work)
    time.sleep(2)
    assert kit.depth(dlq) == 1 and not DeadLetter.objects.filter(body=b"after").exists()
    turned_off = AuditEvent.objects.filter(action="place.keep", place_name=dlq).latest("id")
    assert (turned_off.outcome, turned_off.reason) == ("off", "keep_in_custody set to false through the API")


def test_a_queue_declared_later_is_discovered_and_kept_by_the_brokers_default(kit, rabbit_broker, operator, keeper):
    answer = _client(operator).patch(f"/api/brokers/{rabbit_broker.pk}/",
                                     {"keep_new_places": True, "reason": "keep everything"}, format="json")
    assert answer.status_code == 200 and answer.json()["keep_new_places"] is True, answer.content
    keeper.start()
    work, dlq = _dead_queue(kit, "declared-later")

    discover_brokers()  # what Celery beat runs every DLO_DISCOVER_SECONDS
    place = DeadPlace.objects.get(broker=rabbit_broker, name=dlq)
    assert place.keep_in_custody
    appeared = AuditEvent.objects.get(action="place.appeared", place_name=dlq)
    assert appeared.details["keep_in_custody"] is True
    _held_by_the_keeper(kit, place, keeper)
    _dies_and_is_kept(kit, work, place, b"first letter of a new queue")
    assert AuditEvent.objects.filter(action="broker.keep_new_places", actor_name="olga", outcome="on").exists()


def test_a_capture_of_a_kept_place_is_refused(kit, rabbit_broker, operator):
    _, dlq = _dead_queue(kit, "no-capture")
    (place,) = [p for p in do_discover(rabbit_broker, actor=operator) if p.name == dlq]
    api = _client(operator)
    api.patch(f"/api/places/{place.pk}/", {"keep_in_custody": True}, format="json")
    answer = api.post(f"/api/places/{place.pk}/capture/", {"reason": "by hand"}, format="json")
    assert answer.status_code == 400 and "kept in custody" in answer.json()["detail"]
