"""A replay from the archive is requested through the one door like every job (finding 7):
over the approval threshold it waits for a second person, and it is refused when the archived
letters lie outside the requester's scope. ``manage.py pipeline replay`` says so and does not
run it."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from console.jobs.door.requests import request_job
from console.models import AuditEvent, Job, RoleScope
from console.pipeline.archive import archive
from console.services.jobs import JobError

pytestmark = [pytest.mark.spark, pytest.mark.django_db, pytest.mark.approvals]


@pytest.fixture
def archived(spark, lake, custody):
    """Three replayed letters of orders.dlq and two of billing.dlq, archived to the lake. The
    in-memory broker holds the queues, so it tells that orders and billing dead-letter into them
    (where a user limited to a place may replay to is the broker's word: finding 9)."""
    from console.brokers.memory.adapter import MemoryBroker

    MemoryBroker.instances.pop("pipeline", None)
    for queue in ("orders", "orders.dlq", "billing", "billing.dlq"):
        MemoryBroker.named("pipeline").queue(queue)
    broker = custody.broker()
    orders, billing = custody.place(broker, "orders.dlq"), custody.place(broker, "billing.dlq")
    for _ in range(3):
        custody.letter(orders, origin="orders", body=b"{}", captured_days_ago=1, state="replayed")
    for _ in range(2):
        custody.letter(billing, origin="billing", body=b"{}", captured_days_ago=1, state="replayed")
    archive(lake, spark=spark)
    return orders, billing


def test_an_archive_replay_over_the_threshold_waits_for_approval(settings, lake, archived, operator):
    settings.DLO_APPROVAL_THRESHOLD = 2
    orders, _ = archived
    job = request_job("archive_replay", actor=operator, reason="INC-5 replay", lake=lake, origin="orders")
    assert (job.status, job.total, job.per_place) == ("awaiting_approval", 3, {str(orders.pk): 3})
    assert AuditEvent.objects.filter(job_id=job.pk, action="job.approval_requested").exists()

    small = request_job("archive_replay", actor=operator, reason="INC-5 replay", lake=lake, origin="billing",
                        run_here=True)
    assert (small.status, small.total) == ("queued", 2)


def test_the_command_says_the_replay_waits_and_does_not_run_it(settings, lake, archived, admin, capsys):
    settings.DLO_APPROVAL_THRESHOLD = 2
    call_command("pipeline", "replay", "--lake", lake, "--origin", "orders", "--reason", "INC-5", "--actor", "ada")
    assert "waits for a second person's approval" in capsys.readouterr().out
    job = Job.objects.get(kind="archive_replay")
    assert (job.status, job.done) == ("awaiting_approval", 0)


def test_an_archive_replay_outside_the_requesters_scope_is_refused(lake, archived, operator, admin):
    orders, billing = archived
    RoleScope.objects.create(user=operator, place=billing)
    RoleScope.objects.create(user=admin, place=billing)
    with pytest.raises(JobError, match="outside what you may act on"):
        request_job("archive_replay", actor=operator, reason="INC-5", lake=lake, origin="orders")
    with pytest.raises(CommandError, match="outside what you may act on"):
        call_command("pipeline", "replay", "--lake", lake, "--since", "2000-01-01", "--reason", "all of it",
                     "--actor", "ada")
    assert not Job.objects.filter(kind="archive_replay").exists()
    assert request_job("archive_replay", actor=operator, reason="INC-5", lake=lake, origin="billing").total == 2


def test_an_archived_letter_naming_another_place_as_its_origin_is_not_replayed_there(
        spark, lake, archived, custody, operator):
    """Finding 9 from the archive: a letter of billing.dlq whose headers named orders.dlq as its
    origin does not make orders.dlq a queue the operator limited to billing.dlq may publish into."""
    _, billing = archived
    custody.letter(billing, origin="orders.dlq", body=b"{}", captured_days_ago=1, state="replayed")
    archive(lake, spark=spark)
    RoleScope.objects.create(user=operator, place=billing)
    with pytest.raises(JobError, match="'orders.dlq' is outside what you may act on"):
        request_job("archive_replay", actor=operator, reason="INC-5", lake=lake, origin="orders.dlq")
    assert not Job.objects.filter(kind="archive_replay").exists()
