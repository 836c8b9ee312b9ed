"""The one SparkSession the pipeline uses, in whatever process runs it.

Three ways, chosen by the environment:

* ``DLO_SPARK_REMOTE=sc://host:15002``: a Spark Connect session. The process holds only the
  pure-Python client (gRPC and Arrow); Spark, and Java, run in the Connect server.
* under ``spark-submit``: the session spark-submit's driver made, with its master and --conf.
* otherwise Spark starts in this process, ``local[*]`` unless ``DLO_SPARK_MASTER`` names another
  master, with ``DLO_SPARK_DRIVER_MEMORY`` (default ``2g``) and Spark's log level
  ``DLO_SPARK_LOG_LEVEL`` (default ``WARN``).

A session that already exists (the tests' one, or the one spark-submit made) is reused as it is.
"""

from __future__ import annotations

import os

from django.conf import settings
from pyspark.sql import SparkSession

from console.pipeline.spark_log import java_options

# Settings for every run unless spark-submit's --conf gives its own: UTC days, shuffles sized
# by adaptive execution (4 partitions where it cannot, measured best on two cores), and
# overwrites that replace only the partitions written.
DEFAULTS = {
    "spark.sql.session.timeZone": "UTC",
    "spark.sql.shuffle.partitions": "4",
    "spark.sql.adaptive.enabled": "true",
    # Shuffles start wide and adaptive execution merges them to its advisory size (64 MB): a few
    # partitions for a small lake, many for 100M letters, whose sorts then need not spill.
    "spark.sql.adaptive.coalescePartitions.initialPartitionNum": "64",
    "spark.sql.sources.partitionOverwriteMode": "dynamic",
    "spark.sql.parquet.compression.codec": "zstd",
}


def get_spark(app_name: str = "dead-letter-office") -> SparkSession:
    """The active session, or a new one configured from the environment."""
    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    if settings.DLO_SPARK_REMOTE:
        return _connect(settings.DLO_SPARK_REMOTE)
    return _in_process(app_name)


def _connect(url: str) -> SparkSession:
    """A Spark Connect session; the server keeps its own cluster settings, ours are the session's."""
    builder = SparkSession.builder.remote(url)
    for key, value in DEFAULTS.items():
        builder = builder.config(key, value)
    return builder.getOrCreate()


def _in_process(app_name: str) -> SparkSession:
    from pyspark import SparkConf, SparkContext

    given = None
    if "PYSPARK_GATEWAY_PORT" in os.environ:
        # spark-submit started this driver (its JVM is up): its --conf wins over ours.
        SparkContext._ensure_initialized()
        given = SparkConf()
    builder = SparkSession.builder.appName(app_name)
    if settings.DLO_SPARK_MASTER:
        builder = builder.master(settings.DLO_SPARK_MASTER)
    if given is None:
        builder = builder.config("spark.driver.memory", settings.DLO_SPARK_DRIVER_MEMORY)
        builder = builder.config("spark.ui.showConsoleProgress", "false")
        builder = builder.config("spark.driver.extraJavaOptions", java_options())  # its log to var/log
    for key, value in DEFAULTS.items():
        if given is None or not given.contains(key):
            builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(settings.DLO_SPARK_LOG_LEVEL)
    return spark
