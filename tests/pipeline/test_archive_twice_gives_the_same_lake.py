"""archive: letters, finished jobs and audit events land in the lake partitioned by day, broker
and place; bodies once per content; a second run, or a run that lost its watermark, adds nothing."""

from __future__ import annotations

import pytest
from django.core.management import call_command
from django.utils import timezone

from console.models import Job, LakeWatermark
from console.pipeline.archive import archive
from console.pipeline.schema import BODIES, LETTERS
from tests.pipeline.conftest import NOW
from tests.pipeline.lakeview import content, files

pytestmark = [pytest.mark.spark, pytest.mark.django_db]


def test_archive_twice_gives_the_same_lake(spark, lake, custody):
    broker = custody.broker()
    orders, billing = custody.place(broker, "orders.dlq"), custody.place(broker, "billing.dlq", scope="/")
    letters = [
        custody.letter(orders, exception="IllegalStateException", message="no stock", body=b'{"same": 1}',
                       captured_days_ago=2),
        custody.letter(orders, body=b'{"same": 1}', captured_days_ago=1),
        custody.letter(billing, origin="billing", body=b"<script>alert(1)</script>\x00\xff", captured_days_ago=1),
        custody.letter(billing, origin="billing", state="purged", body=b"", body_erased=True),
    ]
    running = Job.objects.create(kind="purge", status="running", actor_name="olga", reason="r")
    Job.objects.create(kind="purge", status="succeeded", actor_name="olga", reason="r", finished_at=timezone.now())

    first = archive(lake, spark=spark)
    assert first["letters"] == 4 and first["audit"] >= 1 and first["jobs"] == 0  # below the running job
    after_one, files_one = content(spark, lake), files(lake)

    call_command("pipeline", "archive", "--lake", lake)
    assert content(spark, lake) == after_one and files(lake) == files_one

    # A run that wrote its rows but died before keeping its watermark: the next one adds nothing.
    LakeWatermark.objects.filter(lake=lake).delete()
    assert archive(lake, spark=spark) == {"letters": 0, "jobs": 0, "audit": 0}
    assert content(spark, lake) == after_one

    archived = {row[0]: row for row in after_one[LETTERS]}
    assert sorted(archived) == sorted(letter.id for letter in letters)
    days = {f"day={(NOW - timezone.timedelta(days=d)).date()}" for d in (0, 1, 2)}
    assert {path.split("/")[1] for path in files_one if path.startswith("letters/")} == days
    assert f"letters/day={NOW.date()}/broker=mem/place={billing.pk}" in {p.rsplit("/", 1)[0] for p in files_one}
    # Three bodies with content, two of them the same: two stored; the purged one has none.
    assert sorted(body for _, body, _, _ in after_one[BODIES]) == sorted(
        [b'{"same": 1}', b"<script>alert(1)</script>\x00\xff"])
    assert archived[letters[3].id][24] is None

    # Incremental: a new letter and the finished job come on the next run, nothing else.
    custody.letter(orders, body=b'{"same": 1}')
    Job.objects.filter(pk=running.pk).update(status="succeeded", finished_at=timezone.now())
    added = archive(lake, spark=spark)
    assert (added["letters"], added["jobs"]) == (1, 2)
    again = content(spark, lake)
    assert len(again[LETTERS]) == 5 and again[BODIES] == after_one[BODIES]
