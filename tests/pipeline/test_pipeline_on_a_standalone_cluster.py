"""The pipeline on a real Spark standalone cluster (master and worker on loopback, from the
pyspark wheel), each job run through ``spark-submit`` as the README says: archive, groups,
retention and replay give what the same jobs give on a local Spark on the same data."""

from __future__ import annotations

from datetime import timedelta

import pytest

from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import AuditEvent, DeadLetter, FailureGroupDay, FailureGroupHistory, Job
from console.pipeline import lake as lakefs
from console.pipeline.archive import archive
from console.pipeline.groups import run_groups
from console.pipeline.retention import erase_lake_bodies
from console.pipeline.schema import BODIES, LETTERS, SCHEMAS
from tests.pipeline.cluster import StandaloneCluster, project_zip, spark_submit
from tests.pipeline.conftest import NOW
from tests.pipeline.lakeview import content
from tests.rabbitmq.kit import MANAGEMENT_URL, PASSWORD, USER, RabbitKit

pytestmark = [pytest.mark.spark, pytest.mark.rabbitmq, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    started = StandaloneCluster(tmp_path_factory.mktemp("spark-cluster")).start()
    yield started
    started.stop()


@pytest.fixture
def kit():
    helper = RabbitKit()
    yield helper
    helper.close()


def groups_stored() -> tuple[list, list]:
    groups = sorted((g.fingerprint, g.count, g.first_seen, g.last_seen, g.exception_type, g.sample_message, g.reason,
                     g.origins, g.brokers, g.consumers, g.hosts) for g in FailureGroupHistory.objects.all())
    days = sorted(FailureGroupDay.objects.values_list("group__fingerprint", "day", "count"))
    return groups, days


def test_each_job_through_spark_submit_gives_what_local_spark_gives(cluster, spark, tmp_path, custody, kit):
    origin = kit.queue(kit.name("cluster-orders"))
    broker = custody.broker(name=f"rabbit-{kit.suffix}", kind="rabbitmq",
                            url=f"amqp://{USER}:{PASSWORD}@127.0.0.1:5672/%2F", management_url=MANAGEMENT_URL)
    place = custody.place(broker, kit.name("cluster-orders.dlq"), scope="/")
    old = dict(state="replayed", resolved_days_ago=40)
    for i in range(40):
        custody.letter(place, origin=origin if i % 2 else "billing", exception=("TimeoutError", "KeyError")[i % 3 == 0],
                       message=f"after {i % 5}s", body=f'{{"order": {i}}}'.encode(), captured_days_ago=i % 4,
                       details={"consumer": f"c-{i % 3}", "host": f"web-{i % 2}"},
                       **({"state": "replayed", "resolved_days_ago": 0.5} if i % 5 == 0 else {}))
    expired = [custody.letter(place, origin=origin, exception="TimeoutError", body=f"old {i}".encode(),
                              captured_days_ago=45 + i, **old) for i in range(3)]
    package = project_zip(tmp_path)
    on_cluster, on_local = str(tmp_path / "lake-cluster"), str(tmp_path / "lake-local")
    log = tmp_path / "spark-submit.log"

    # archive
    assert "letters +43" in spark_submit(cluster, package, "archive", "--lake", on_cluster, log=log)
    archive(on_local, spark=spark)
    assert content(spark, on_cluster) == content(spark, on_local)

    # groups
    fingerprints = DeadLetter.objects.values("fingerprint").distinct().count()
    assert f"failure groups (history): {fingerprints}" in spark_submit(cluster, package, "groups", "--lake",
                                                                       on_cluster, log=log)
    by_cluster = groups_stored()
    assert run_groups(on_local, spark=spark) == fingerprints > 1
    assert groups_stored() == by_cluster

    # retention: the three letters resolved 40 days ago, captured more than 30 days ago, go, and
    # so do their bodies in the lake. Custody has changed then, so the local side is retention's
    # Spark part on the same letters.
    spark_submit(cluster, package, "retention", "--lake", on_cluster, "--days", "30", log=log)
    assert not DeadLetter.objects.filter(pk__in=[letter.pk for letter in expired]).exists()
    assert DeadLetter.objects.count() == 40
    assert AuditEvent.objects.get(action="retention.lake_bodies").count == 3
    assert erase_lake_bodies(spark, on_local, [letter.pk for letter in expired], 30) == 3
    assert content(spark, on_cluster) == content(spark, on_local)
    bodies = {row.body for row in lakefs.read(spark, on_cluster, BODIES, SCHEMAS[BODIES]).collect()}
    assert b"old 0" not in bodies and b'{"order": 1}' in bodies

    # replay from the archive, by day and origin: the same letters go back, in the same order.
    day = str((NOW - timedelta(days=1)).date())
    spark_submit(cluster, package, "replay", "--lake", on_cluster, "--origin", origin, "--since", day, "--until", day,
                 "--reason", "replay on the cluster", log=log)
    from_cluster = [message.body for message in kit.drain(origin)]
    job = request_job("archive_replay", actor="tests", reason="replay on local Spark", lake=on_local, origin=origin,
                      since=day, until=day, run_here=True)
    assert run_job(job.pk) == "succeeded"
    from_local = [message.body for message in kit.drain(origin)]
    archived = lakefs.read(spark, on_local, LETTERS, SCHEMAS[LETTERS])
    wanted = archived.where((archived.origin_queue == origin) & (archived.day == day)).count()
    assert wanted > 0 and len(from_cluster) == len(from_local) == wanted - DeadLetter.objects.filter(
        origin_queue=origin, state="held", captured_at__date=day).count()
    assert from_cluster == from_local
    replays = Job.objects.filter(kind="archive_replay").order_by("id")
    assert [(j.status, j.done) for j in replays] == [("succeeded", len(from_cluster))] * 2
    assert AuditEvent.objects.filter(action="archive_replay", outcome="confirmed", job_id=replays[0].pk).exists()

    # Each job ran as an application of the cluster, not in a local Spark of its own.
    ran = [app["name"] for app in cluster.state()["completedapps"]]
    assert len(ran) == 4, ran
