"""Finding 9 (invariant 11, content never widens rights): a message in A's DLQ whose
``x-original-queue`` header names B's DLQ does not make B's DLQ a queue an operator limited to
A may publish into. Neither his move into it nor a replay of that letter is accepted, and a
rule acting for him is refused the same; B's DLQ gains nothing. A letter whose origin really
dead-letters into A (RabbitMQ's x-dead-letter-* arguments say so) still replays for him."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from console.access.actors import RuleActor
from console.access.roles import OPERATOR, set_role
from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import DeadLetter, Job, RoleScope
from console.services.brokers import do_discover
from console.services.jobs import JobError

pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db]

REASON = "outside what you may act on"


@pytest.fixture
def a_and_b(kit, captured, rabbit_broker, operator, django_user_model):
    """B: a work queue dead-lettering into its DLQ, which held one letter. A: the same, holding
    a genuine letter, rejected by A's work queue, and a hostile one, published straight into
    A's DLQ with Spring AMQP's headers, its x-original-queue naming B's DLQ. All captured; otto
    is an operator limited to A's DLQ."""
    _, b_place, _ = captured("b-work", [(b"b's own", {})])
    b_dlq = b_place.name
    a_dlq = kit.queue(kit.name("a-work") + ".dlq")
    work_a = kit.queue(kit.name("a-work"), {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": a_dlq})
    kit.publish(work_a, b"genuine")
    kit.reject(work_a)
    kit.publish(a_dlq, b"hostile", headers={"x-exception-message": "boom", "x-original-queue": b_dlq})
    kit.wait_depth(a_dlq, 2)
    (a_place,) = [p for p in do_discover(rabbit_broker, actor=operator) if p.name == a_dlq]
    assert run_job(request_job("capture", place=a_place, actor=operator, reason="triage").pk) == "succeeded"
    genuine, hostile = DeadLetter.objects.filter(place=a_place).order_by("id")
    assert (genuine.origin_queue, hostile.origin_queue) == (work_a, b_dlq)  # what the header says
    otto = django_user_model.objects.create_user("otto")
    set_role(otto, OPERATOR)
    RoleScope.objects.create(user=otto, place=a_place)
    return otto, work_a, b_dlq, genuine, hostile


def _as(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_his_move_into_the_header_named_queue_is_refused(kit, a_and_b):
    otto, _, b_dlq, _, hostile = a_and_b
    answer = _as(otto).post("/api/jobs/", {"action": "move", "letters": [hostile.pk], "target": b_dlq,
                                           "reason": "park it"}, format="json")
    assert answer.status_code in (400, 403), answer.content
    assert REASON in answer.json()["detail"] and b_dlq in answer.json()["detail"]
    assert not Job.objects.filter(kind="move").exists()
    assert kit.depth(b_dlq) == 0


def test_a_replay_of_the_hostile_letter_is_refused_with_the_reason(kit, a_and_b):
    otto, _, b_dlq, _, hostile = a_and_b
    answer = _as(otto).post("/api/jobs/", {"action": "replay", "letters": [hostile.pk], "reason": "retry"},
                            format="json")
    assert answer.status_code in (400, 403), answer.content
    detail = answer.json()["detail"]
    assert REASON in detail and b_dlq in detail and "headers" in detail
    assert not Job.objects.filter(kind="replay").exists()
    assert kit.depth(b_dlq) == 0


def test_a_rule_acting_for_him_is_refused_the_same(kit, a_and_b):
    otto, _, b_dlq, _, hostile = a_and_b
    rule = RuleActor("retry everything", 1, user=otto, place_id=hostile.place_id)
    with pytest.raises(JobError, match=REASON):
        request_job("replay", actor=rule, reason="rule 'retry everything' v1: retry", ids=[hostile.pk])
    assert kit.depth(b_dlq) == 0


def test_a_genuine_origin_still_replays_for_him(kit, a_and_b):
    otto, work_a, _, genuine, _ = a_and_b
    answer = _as(otto).post("/api/jobs/", {"action": "replay", "letters": [genuine.pk], "reason": "fixed"},
                            format="json")
    assert answer.status_code == 202, answer.content
    assert run_job(answer.json()["id"]) == "succeeded"
    assert [m.body for m in kit.drain(work_a)] == [b"genuine"]


def test_someone_unlimited_keeps_todays_behaviour(kit, a_and_b, operator):
    _, _, b_dlq, _, hostile = a_and_b
    job = request_job("replay", actor=operator, reason="an admin's call", ids=[hostile.pk])
    assert run_job(job.pk) == "succeeded"
    assert kit.depth(b_dlq) == 1
