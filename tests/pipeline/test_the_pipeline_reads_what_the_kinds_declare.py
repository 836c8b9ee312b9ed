"""The pipeline names no kind of job: a kind that publishes letters back to their origins, or
leaves them resolved, is read by retention and the failure analytics from its own declarations
(``publishes_to``, ``audited_as``, ``resolves``), passed down by the jobs layer. A test-only
kind (tests/kinds_for_tests/redeliver_kind.py) is counted once registered, and not before."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from console.jobs.kinds import register, replays, resolving, unregister
from console.models import Job, LetterState
from console.pipeline.analytics import resolving_events_sql
from console.pipeline.retention import last_activations
from console.services import audit

pytestmark = pytest.mark.django_db


@pytest.fixture
def redeliver():
    register("redeliver", "tests.kinds_for_tests.redeliver_kind.Redeliver")
    yield
    unregister("redeliver")


@pytest.fixture
def redelivered(memory_broker):
    """A finished job of the new kind that published a letter back to ``billing``."""
    finished = timezone.now() - timedelta(hours=1)
    job = Job.objects.create(kind="redeliver", status=Job.Status.SUCCEEDED, finished_at=finished)
    event = audit.record("redeliver", actor="tests", job=job, broker=memory_broker[1], target="billing",
                         letter_ids=[7], outcome="confirmed", reason="pipeline test")
    return job, event


def _events(sql: str) -> list[int]:
    with connection.cursor() as cursor:
        cursor.execute(sql, [0, 1000])
        return [row[0] for row in cursor.fetchall()]


def test_retention_counts_a_new_replaying_kind_as_an_activation(redeliver, redelivered):
    job, _ = redelivered
    (activation,) = last_activations(replays()).values()
    assert activation.job_id == job.pk and activation.succeeded


def test_analytics_count_the_letters_a_new_kind_resolves(redeliver, redelivered):
    _, event = redelivered
    assert resolving()[("redeliver", "confirmed")] == LetterState.REPLAYED
    assert _events(resolving_events_sql(resolving())) == [event.pk]


def test_unregistered_the_pipeline_does_not_count_it(redelivered):
    assert last_activations(replays()) == {}
    assert ("redeliver", "confirmed") not in resolving()
    assert _events(resolving_events_sql(resolving())) == []
