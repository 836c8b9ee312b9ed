"""``manage.py demo --analytics`` (what ``make run`` runs) leaves the analytics page with figures
from the first minute: it runs the pipeline's groups and analytics jobs on Spark once, as a
fresh process does (a JVM of its own, no test session), and quietly: Spark's and Java's log go
to var/log/spark.log, not to the console. A second run computes nothing again."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.conf import settings
from django.test import Client
from django.urls import reverse

from console.models import FailureGroupHistory, OutcomeStat
from console.pipeline.spark_log import log_file
from tests.workers import test_database_url

# The process writes to the test database: committed rows, emptied after the test.
pytestmark = [pytest.mark.spark, pytest.mark.django_db(transaction=True)]

#: What the JVM itself prints when Spark 4 loads its vector module: not a log4j message.
JVM_NOTICE = "WARNING: Using incubator modules: jdk.incubator.vector"


def _demo(lake) -> subprocess.CompletedProcess:
    # No SPARK_LOCAL_IP, as on a newcomer's machine (Spark then warns about the host name).
    env = {key: value for key, value in os.environ.items() if key != "SPARK_LOCAL_IP"}
    env.update(DATABASE_URL=test_database_url(), DLO_LAKE_URL=str(lake))
    return subprocess.run([sys.executable, "manage.py", "demo", "--no-rabbitmq", "--analytics"], cwd=settings.BASE_DIR,
                          env=env, capture_output=True, text=True, timeout=600)


def test_the_demo_computes_the_analytics_once_with_spark_s_log_in_a_file(tmp_path):
    log = log_file()
    logged_before = log.stat().st_size if log.exists() else 0

    done = _demo(tmp_path / "lake")
    assert done.returncode == 0, done.stderr
    assert "failure groups (history): 6; analytics: 12 letters" in done.stdout
    assert [line for line in done.stderr.splitlines() if line.strip() and line != JVM_NOTICE] == []
    with log.open() as spark_log:
        spark_log.seek(logged_before)
        assert "WARN org.apache.hadoop.util.NativeCodeLoader" in spark_log.read()  # there, not on the console

    assert OutcomeStat.objects.get(kind="all").letters == 12 and FailureGroupHistory.objects.count() == 6
    client = Client()
    assert client.login(username="demo", password="dead-letters-demo")
    page = client.get(reverse("analytics")).content.decode()
    assert "No analytics yet" not in page
    assert "com.shop.billing.PaymentDeclinedException" in page

    again = _demo(tmp_path / "lake")
    assert again.returncode == 0 and "computing" not in again.stdout
