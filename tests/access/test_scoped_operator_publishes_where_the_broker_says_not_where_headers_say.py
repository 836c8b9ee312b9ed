"""Finding 9 on the in-memory broker (its topology: ``q`` dead-letters into ``q.dlq``): an
operator limited to orders.dlq may publish into ``orders`` because the broker says so, not
because a letter names it. A letter whose own header names billing.dlq as its origin neither
replays nor moves there; when the broker cannot be asked, the replay is refused with that
reason rather than trusting the header; a rule acting for him is refused the same."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from console.access.actors import RuleActor
from console.jobs.door.approvals import may_approve
from console.jobs.door.requests import request_job
from console.models import Job, RoleScope
from console.services.jobs import JobError
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


@pytest.fixture
def limited(people, memory_broker):
    """otto, an operator limited to orders.dlq, which holds a letter from orders and one whose
    header names billing.dlq (another place of the broker) as its origin."""
    orders = memory_place(memory_broker)
    memory_place(memory_broker, origin="billing")
    genuine = store_letter(orders, b"{}", origin="orders")
    forged = store_letter(orders, b"{}", origin="billing.dlq")
    RoleScope.objects.create(user=people["operator"], place=orders)
    return people["operator"], genuine, forged


def _post(user, **given):
    client = APIClient()
    client.force_authenticate(user)
    return client.post("/api/jobs/", {"reason": "try again", **given}, format="json")


def test_a_replay_to_a_header_named_origin_is_refused(limited):
    otto, genuine, forged = limited
    answer = _post(otto, action="replay", letters=[genuine.pk, forged.pk])
    assert answer.status_code in (400, 403), answer.content
    assert "'billing.dlq' is outside what you may act on" in answer.json()["detail"]
    assert "headers" in answer.json()["detail"]
    assert not Job.objects.exists()
    assert _post(otto, action="replay", letters=[genuine.pk]).status_code == 202


def test_a_move_into_a_header_named_origin_is_refused(limited):
    otto, _, forged = limited
    answer = _post(otto, action="move", letters=[forged.pk], target="billing.dlq")
    assert answer.status_code in (400, 403), answer.content
    assert "outside what you may act on" in answer.json()["detail"]
    assert not Job.objects.exists()


def test_a_rule_acting_for_him_is_refused_the_same(limited):
    otto, _, forged = limited
    rule = RuleActor("retry", 1, user=otto, place_id=forged.place_id)
    with pytest.raises(JobError, match="outside what you may act on"):
        request_job("replay", actor=rule, reason="rule 'retry' v1: retry", ids=[forged.pk])


def test_he_may_not_approve_a_replay_to_a_header_named_origin(limited, people):
    otto, _, forged = limited
    job = request_job("replay", actor=people["admin"], reason="an admin's", ids=[forged.pk])
    assert "'billing.dlq' is outside what you may act on" in may_approve(job, otto)


def test_when_the_broker_cannot_be_asked_the_replay_is_refused(limited, memory_broker):
    otto, genuine, _ = limited
    memory_broker[0].down = True
    answer = _post(otto, action="replay", letters=[genuine.pk])
    assert answer.status_code in (400, 403), answer.content
    detail = answer.json()["detail"]
    assert "'orders' is outside what you may act on until its broker says where its dead letters go" in detail
    assert "memory broker is down" in detail
    assert not Job.objects.exists()


def test_unlimited_or_limited_to_the_broker_nothing_is_asked(limited, people, memory_broker):
    otto, genuine, forged = limited
    memory_broker[0].down = True
    RoleScope.objects.filter(user=otto).update(place=None, broker=memory_broker[1])
    assert _post(otto, action="replay", letters=[genuine.pk, forged.pk]).status_code == 202
    assert _post(people["admin"], action="replay", letters=[forged.pk]).status_code == 202
