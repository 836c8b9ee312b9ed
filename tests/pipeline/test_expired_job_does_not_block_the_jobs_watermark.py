"""The lake's jobs dataset takes every finished job, an expired one included, so a job nobody
approved no longer holds back every later job (finding 13): the statuses come from Job.FINISHED,
named once."""

from __future__ import annotations

import pytest

from console.models import Job
from console.pipeline.source import JOBS_SQL, keyset

pytestmark = pytest.mark.django_db


def _job(status: str) -> Job:
    return Job.objects.create(kind="mark_failed", status=status, actor_name="olga", reason="r")


def test_jobs_after_an_expired_one_are_read_for_the_lake():
    expired, succeeded = _job("expired"), _job("succeeded")
    read = [row[0] for rows in keyset(JOBS_SQL, after=0) for row in rows]
    assert read == [expired.pk, succeeded.pk]


def test_an_unfinished_job_still_holds_back_the_ones_after_it():
    done, waiting, later = _job("failed"), _job("awaiting_approval"), _job("succeeded")
    read = [row[0] for rows in keyset(JOBS_SQL, after=0) for row in rows]
    assert read == [done.pk]
    assert set(Job.FINISHED) == {"cancelled", "succeeded", "partly_failed", "failed", "refused", "expired"}
    Job.objects.filter(pk=waiting.pk).update(status="expired")
    assert [row[0] for rows in keyset(JOBS_SQL, after=0) for row in rows] == [done.pk, waiting.pk, later.pk]
