"""With ``DLO_SPARK_REMOTE=sc://127.0.0.1:<port>``, a real ``celery -A console worker`` runs the
pipeline's archive, groups and analytics through a Spark Connect server started from the wheel. The worker
has no Java to start (``JAVA_HOME`` points nowhere) and starts no JVM; the lake it wrote is read
back with DuckDB and the groups are checked against SQL on the same letters."""

from __future__ import annotations

import os
import time

import duckdb
import pytest
from django.db import connection

from console.celery import app
from console.models import ArrivalCell, DeadLetter, FailureGroupHistory, LakeWatermark, OutcomeStat
from tests.pipeline.cluster import ConnectServer, java_processes_under
from tests.pipeline.test_groups_match_sql import SQL
from tests.workers import Worker

pytestmark = [pytest.mark.spark, pytest.mark.django_db(transaction=True)]


@pytest.fixture(scope="module")
def connect_server(tmp_path_factory):
    server = ConnectServer(tmp_path_factory.mktemp("spark-connect")).start()
    yield server
    server.stop()


def wait_for(condition, what: str, worker: Worker, seconds: float = 180) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert worker.alive() and time.monotonic() < deadline, f"no {what}:\n{worker.log()}"
        time.sleep(0.5)


def test_the_worker_archives_groups_and_analyses_through_spark_connect(connect_server, custody, filesystem_transport,
                                                              tmp_path):
    place = custody.place(custody.broker(), "orders.dlq")
    for i in range(30):
        custody.letter(place, origin=("orders", "billing")[i % 2], exception=("TimeoutError", "KeyError")[i % 3 == 0],
                       message=f"after {i % 4}s", body=f"body {i % 7}".encode(), captured_days_ago=i % 5,
                       details={"consumer": f"c-{i % 3}", "host": f"web-{i % 2}"})
    lake = tmp_path / "lake"
    # JVMs under this process before the test (the Connect server, a local Spark other tests
    # started): the test itself must add none.
    before = set(java_processes_under(os.getpid()))
    worker = Worker(filesystem_transport, tmp_path / "worker.log", DLO_SPARK_REMOTE=connect_server.url,
                    DLO_LAKE_URL=str(lake), JAVA_HOME=str(tmp_path / "no-java-here"))
    worker.start()
    try:
        last = DeadLetter.objects.order_by("-id").values_list("id", flat=True).first()
        app.send_task("console.pipeline.archive")
        wait_for(lambda: LakeWatermark.objects.filter(lake=str(lake), dataset="letters", last_id=last).exists(),
                 "archive through Spark Connect", worker)
        app.send_task("console.pipeline.groups")
        wait_for(FailureGroupHistory.objects.exists, "groups through Spark Connect", worker)
        app.send_task("console.pipeline.analytics")
        wait_for(OutcomeStat.objects.exists, "analytics through Spark Connect", worker)
        assert java_processes_under(worker.process.pid) == []
        assert set(java_processes_under(os.getpid())) <= before
    finally:
        worker.kill()

    letters = duckdb.sql(
        f"SELECT id, body_sha256 FROM read_parquet('{lake}/letters/**/*.parquet') ORDER BY id").fetchall()
    assert [row[0] for row in letters] == list(DeadLetter.objects.order_by("id").values_list("id", flat=True))
    (bodies,), = duckdb.sql(f"SELECT count(*) FROM read_parquet('{lake}/bodies/**/*.parquet')").fetchall()
    assert bodies == len({row[1] for row in letters}) == 7
    with connection.cursor() as cursor:
        cursor.execute(SQL)
        expected = {row[0]: (row[1], row[2], row[3], row[4], sorted(row[5]), sorted(row[6])) for row in cursor}
    stored = {g.fingerprint: (g.count, g.first_seen, g.last_seen, g.origins, sorted(g.consumers), sorted(g.hosts))
              for g in FailureGroupHistory.objects.all()}
    assert stored == expected and len(stored) == 4
    assert OutcomeStat.objects.get(kind="all").letters == 30
    assert sum(ArrivalCell.objects.values_list("letters", flat=True)) == 30
    assert {o.fingerprint: o.letters for o in OutcomeStat.objects.filter(kind="group")} == {
        fingerprint: figures[0] for fingerprint, figures in expected.items()}
