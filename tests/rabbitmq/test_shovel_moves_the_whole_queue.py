"""A whole dead queue moved by RabbitMQ's own shovel, asked for from the console and proved by
counting: every message arrives as it was, letters in custody stay, the audit has the request
and the outcome, wrong targets are refused, a resumed job follows its own shovel, a move the
counts cannot prove fails, and a cancel removes the shovel."""

from __future__ import annotations

from datetime import timedelta
from urllib.parse import quote

import aio_pika
import pytest
from django.urls import reverse
from django.utils import timezone

from console.brokers import BrokerError, PlaceRef
from console.jobs.control import claim
from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.jobs.door.steering import do_cancel_job
from console.jobs.engines.shovel import ShovelRun, move_name
from console.models import AuditEvent, DeadLetter, DeadPlace, Job
from console.services.jobs import JobError
from tests.flow import capture, discovered

pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db]


def message(i: int) -> aio_pika.Message:
    """A message unlike its neighbours: binary body, hostile and non-ASCII headers."""
    body = bytes([i % 256]) * (i % 50) + b"\x00\xff<script>" + str(i).encode()
    headers = {"n": i, "tenant": "<script>alert(1)</script>", "x-exception-message": "Bestellung \u00fcber 12 \u20ac",
               "raw": bytearray(b"\x00\xfe")}
    return aio_pika.Message(body, headers=headers, message_id=f"m-{i}", content_type="application/octet-stream",
                            correlation_id=f"c-{i}", delivery_mode=2)


@pytest.fixture
def dead_queue(kit, rabbit_broker, operator):
    """A factory: ``<base>.dlq`` holding ``count`` messages, found by discovery."""
    def make(base: str, count: int) -> DeadPlace:
        dlq = kit.queue(kit.name(base) + ".dlq")
        kit.publish_many(dlq, [message(i) for i in range(count)])
        kit.wait_depth(dlq, count)
        return discovered(rabbit_broker, operator, dlq, "/")

    return make


def shovel_exists(kit, name: str) -> bool:
    return kit.http.get(f"/api/parameters/shovel/%2F/{quote(name, safe='')}").status_code == 200


def test_a_shovel_job_moves_the_whole_queue_byte_for_byte_and_the_counts_prove_it(kit, dead_queue, operator, client):
    place = dead_queue("invoices", 3)
    assert capture(place, operator).status == "succeeded"
    held = {letter.pk: letter.state for letter in DeadLetter.objects.filter(place=place)}
    assert len(held) == 3
    sent = [message(i) for i in range(3, 2003)]
    kit.publish_many(place.name, sent)
    kit.wait_depth(place.name, 2000)
    target = kit.queue(kit.name("invoices-by-hand"))

    job = request_job("shovel", place=place, target=target, actor=operator, reason="INC-7 hand the queue over",
                      ticket="INC-7")
    assert (job.kind, job.params["target"], job.expected, job.total) == ("shovel", target, 2000, 2000)
    assert run_job(job.pk) == "succeeded"

    job.refresh_from_db()
    assert (job.done, job.failed) == (2000, 0)
    assert f"verified: {place.name} lost 2000 and {target} gained 2000" in job.log[-1]["message"]
    assert kit.depth(place.name) == 0
    moved = kit.drain(target)
    assert [m.body for m in moved] == [m.body for m in sent]
    assert [m.headers for m in moved] == [m.headers for m in sent]
    assert [(m.message_id, m.correlation_id, m.content_type) for m in moved] == [
        (m.message_id, m.correlation_id, m.content_type) for m in sent]
    assert not shovel_exists(kit, move_name(job))  # it removed itself
    # Letters in custody are the console's: the broker moved what was on the broker.
    assert {letter.pk: letter.state for letter in DeadLetter.objects.filter(place=place)} == held

    requested = AuditEvent.objects.get(action="job.requested", job_id=job.pk)
    assert (requested.target, requested.count, requested.place_name, requested.ticket) == (target, 2000, place.name,
                                                                                          "INC-7")
    outcome = AuditEvent.objects.get(action="shovel", job_id=job.pk)
    assert (outcome.outcome, outcome.count, outcome.target, outcome.place_name) == (
        "verified", 2000, target, place.name)
    assert outcome.details["before"]["source"] == 2000 and outcome.details["after"]["source"] == 0
    assert outcome.details["after"]["target"] - outcome.details["before"]["target"] == 2000

    client.force_login(operator)
    page = client.get(reverse("job", args=[job.pk])).content.decode()
    assert "the whole queue, moved by the broker itself" in page
    assert "verified" in page


def test_a_missing_target_the_place_itself_or_no_target_is_refused(kit, dead_queue, operator):
    place = dead_queue("refunds", 2)
    missing = kit.name("refunds-typo")

    with pytest.raises(JobError, match="the broker would create a missing queue"):
        request_job("shovel", place=place, target=missing, actor=operator, reason="move")
    with pytest.raises(JobError, match="itself"):
        request_job("shovel", place=place, target=place.name, actor=operator, reason="move")
    with pytest.raises(JobError, match="needs a target"):
        request_job("shovel", place=place, target="  ", actor=operator, reason="move")
    with pytest.raises(JobError, match="reason"):
        request_job("shovel", place=place, target=kit.queue(kit.name("refunds-other")), actor=operator, reason="")

    assert not Job.objects.filter(kind="shovel").exists()
    assert kit.http.get(f"/api/queues/%2F/{quote(missing, safe='')}").status_code == 404  # nothing created
    assert kit.depth(place.name) == 2


def test_a_target_gone_before_the_job_runs_fails_it_without_creating_the_queue(kit, dead_queue, operator):
    place = dead_queue("coupons", 2)
    target = kit.queue(kit.name("coupons-manual"))
    job = request_job("shovel", place=place, target=target, actor=operator, reason="move")
    kit.delete_queue(target)

    assert run_job(job.pk) == "failed"
    job.refresh_from_db()
    assert f"no queue {target!r}" in job.error
    assert kit.http.get(f"/api/queues/%2F/{quote(target, safe='')}").status_code == 404
    assert kit.depth(place.name) == 2


def test_a_job_resumed_after_its_worker_died_follows_its_own_shovel(kit, dead_queue, operator, adapter):
    place = dead_queue("payments", 2000)
    target = kit.queue(kit.name("payments-manual"))
    job = request_job("shovel", place=place, target=target, actor=operator, reason="move")
    # The first worker counted, asked the broker for the shovel, and died.
    job = claim(job.pk)
    assert ShovelRun(job, place, adapter, target).begin()
    Job.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))

    assert run_job(job.pk) == "succeeded"

    job.refresh_from_db()
    lines = [line["message"] for line in job.log]
    assert "resumed after its worker stopped" in lines
    assert sum("started the shovel" in line for line in lines) == 1  # never a second one
    assert any("found its shovel" in line or "finished while no worker was watching" in line for line in lines)
    assert (kit.depth(place.name), kit.depth(target)) == (0, 2000)
    assert AuditEvent.objects.get(action="shovel", job_id=job.pk).outcome == "verified"


def test_the_adapter_finds_a_running_shovel_by_name_and_removes_it(kit, adapter):
    source = kit.queue(kit.name("orders.dlq"))
    target = kit.queue(kit.name("orders-manual"))
    kit.publish_many(source, [message(i) for i in range(5)])
    kit.wait_depth(source, 5)
    name = f"dlo-test-{kit.suffix}"
    ref = PlaceRef(source, "/")
    try:
        # Asked for more than the queue holds, it moves the five and keeps waiting.
        adapter.start_server_move(ref, target, name=name, count=8)
        kit.wait_depth(target, 5)
        again = adapter.start_server_move(ref, target, name=name, count=8)
        assert (again.source, again.destination, again.count) == (source, target, 8)
        assert [row["name"] for row in kit.http.get("/api/shovels/%2F").json()].count(name) == 1
        with pytest.raises(BrokerError, match="already moves") as refused:
            adapter.start_server_move(ref, source, name=name, count=8)
        assert refused.value.permanent
    finally:
        adapter.stop_server_move(ref, name)
    assert adapter.server_move(ref, name) is None
    adapter.stop_server_move(ref, name)  # gone already: no error
    assert (kit.depth(source), kit.depth(target)) == (0, 5)


def test_a_move_the_counts_cannot_prove_fails_the_job_and_says_why(kit, dead_queue, operator):
    place = dead_queue("tickets", 300)
    # A full target refuses publishes: RabbitMQ's shovel puts the refused messages back and
    # still counts them, so it removes itself having moved only a hundred.
    target = kit.queue(kit.name("tickets-small"), {"x-max-length": 100, "x-overflow": "reject-publish"})
    job = request_job("shovel", place=place, target=target, actor=operator, reason="move")

    assert run_job(job.pk) == "failed"

    job.refresh_from_db()
    assert "the counts do not prove the move" in job.error
    assert f"the broker moved only 100; the other 200 are still in {place.name}" in job.error
    assert (kit.depth(place.name), kit.depth(target)) == (200, 100)  # nothing lost
    outcome = AuditEvent.objects.get(action="shovel", job_id=job.pk)
    assert (outcome.outcome, outcome.count) == ("mismatch", 100)


def test_cancelling_removes_the_shovel_and_says_how_many_moved(kit, dead_queue, operator, adapter):
    place = dead_queue("returns", 1000)
    target = kit.queue(kit.name("returns-manual"))
    job = request_job("shovel", place=place, target=target, actor=operator, reason="move")
    job = claim(job.pk)
    assert ShovelRun(job, place, adapter, target).begin()
    do_cancel_job(job, actor=operator, reason="wrong target")  # while it runs: a request to stop
    Job.objects.filter(pk=job.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))

    assert run_job(job.pk) == "cancelled"

    job.refresh_from_db()
    moved = kit.depth(target)
    assert moved + kit.depth(place.name) == 1000  # what moved stays moved, the rest stays put
    assert job.done == moved
    assert any(f"{moved} messages already moved stay in {target}" in line["message"] for line in job.log)
    assert not shovel_exists(kit, move_name(job))
    outcome = AuditEvent.objects.get(action="shovel", job_id=job.pk)
    assert (outcome.outcome, outcome.count) == ("cancelled", moved)


def test_the_api_and_the_place_page_ask_for_a_shovel(kit, dead_queue, operator, client):
    from rest_framework.test import APIClient

    place = dead_queue("loans", 4)
    target = kit.queue(kit.name("loans-manual"))
    api = APIClient()
    api.force_authenticate(operator)

    missing = api.post(f"/api/places/{place.pk}/shovel/", {"target": kit.name("nope"), "reason": "r"}, format="json")
    assert missing.status_code == 400 and "would create a missing queue" in missing.json()["detail"]
    made = api.post(f"/api/places/{place.pk}/shovel/", {"target": target, "reason": "r", "ticket": "T-1"},
                    format="json")
    assert made.status_code == 202, made.content
    assert (made.json()["kind"], made.json()["target"], made.json()["total"]) == ("shovel", target, 4)
    paused = api.post(f"/api/jobs/{made.json()['id']}/pause/", {"reason": "r"}, format="json")
    assert paused.status_code == 409 and "cannot be paused" in paused.json()["detail"]
    client.force_login(operator)
    steering = client.get(reverse("job", args=[made.json()["id"]])).content.decode()
    assert reverse("job-cancel", args=[made.json()["id"]]) in steering
    assert reverse("job-pause", args=[made.json()["id"]]) not in steering
    assert run_job(made.json()["id"]) == "succeeded"

    page = client.get(reverse("place", args=[place.pk])).content.decode()
    assert "Move the whole queue on the broker" in page and reverse("place-shovel", args=[place.pk]) in page
    kit.publish_many(place.name, [message(9)])
    kit.wait_depth(place.name, 1)
    answer = client.post(reverse("place-shovel", args=[place.pk]), {"target": target, "reason": "again"})
    job = Job.objects.filter(kind="shovel").latest("id")
    assert answer.status_code == 302 and answer["Location"] == reverse("job", args=[job.pk])
    assert run_job(job.pk) == "succeeded"
    assert kit.depth(target) == 5


@pytest.mark.approvals
def test_a_large_shovel_waits_for_a_second_person(kit, dead_queue, operator, settings):
    settings.DLO_APPROVAL_THRESHOLD = 5
    place = dead_queue("bonds", 6)
    job = request_job("shovel", place=place, target=kit.queue(kit.name("bonds-manual")), actor=operator, reason="move")
    assert job.status == "awaiting_approval"
    assert run_job(job.pk) == "not runnable"
    assert kit.depth(place.name) == 6
