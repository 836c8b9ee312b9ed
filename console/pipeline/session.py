"""The one SparkSession the pipeline uses, in whatever process runs it.

Under ``spark-submit`` the master and resources come from the command line; run from
``manage.py`` or a Celery worker, Spark's own default applies (``local[*]``) unless
``DLO_SPARK_MASTER`` names another. A session that already exists (the tests' one, or the one
spark-submit made) is reused as it is.
"""

from __future__ import annotations

import os

from pyspark.sql import SparkSession

# Settings that hold for every run: UTC days, a shuffle sized for small incremental batches
# (adaptive execution coalesces further), and overwrites that replace only the partitions written.
DEFAULTS = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "8",
    "spark.sql.adaptive.enabled": "true",
    "spark.sql.sources.partitionOverwriteMode": "dynamic",
    "spark.sql.parquet.compression.codec": "zstd",
}


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
    builder = builder.config("spark.driver.memory", os.environ.get("DLO_SPARK_DRIVER_MEMORY", "2g"))
    builder = builder.config("spark.ui.showConsoleProgress", "false")
    for key, value in DEFAULTS.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(os.environ.get("DLO_SPARK_LOG_LEVEL", "WARN"))
    return spark
