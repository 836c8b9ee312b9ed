"""The one SparkSession the pipeline uses, in whatever process runs it.

Under ``spark-submit`` the master and resources come from the command line; run from
``manage.py`` or a Celery worker, Spark's own default applies (``local[*]``) unless
``DLO_SPARK_MASTER`` names another. A session that already exists (the tests' one, or the one
spark-submit made) is reused as it is.
"""

from __future__ import annotations

import os

from pyspark import SparkConf, SparkContext
from pyspark.sql import SparkSession

# Settings for every run unless spark-submit's --conf gives its own: UTC days, a shuffle sized
# for a small machine (measured best on two cores; adaptive execution coalesces further), and
# overwrites that replace only the partitions written.
DEFAULTS = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.adaptive.enabled": "true",
    "spark.sql.sources.partitionOverwriteMode": "dynamic",
    "spark.sql.parquet.compression.codec": "zstd",
}


def _submitted_conf() -> SparkConf | None:
    """spark-submit's settings when it started this driver (its JVM is up: the gateway port is
    in the environment), so ours do not override its --conf; None when this process starts Spark."""
    if "PYSPARK_GATEWAY_PORT" not in os.environ:
        return None
    SparkContext._ensure_initialized()
    return SparkConf()


def get_spark(app_name: str = "dead-letter-office") -> SparkSession:
    """The active session, or a new one configured from the environment.

    ``DLO_SPARK_MASTER`` (e.g. ``local[2]``) and ``DLO_SPARK_DRIVER_MEMORY`` (default ``2g``)
    only matter when this process starts the JVM itself, i.e. outside spark-submit.
    """
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    builder = SparkSession.builder.appName(app_name)
    master = os.environ.get("DLO_SPARK_MASTER")
    if master:
        builder = builder.master(master)
    given = _submitted_conf()
    if given is None:
        builder = builder.config("spark.driver.memory", os.environ.get("DLO_SPARK_DRIVER_MEMORY", "2g"))
        builder = builder.config("spark.ui.showConsoleProgress", "false")
    for key, value in DEFAULTS.items():
        if given is None or not given.contains(key):
            builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(os.environ.get("DLO_SPARK_LOG_LEVEL", "WARN"))
    return spark
