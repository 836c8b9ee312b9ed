"""Where the lake is and the few file operations the pipeline needs on it.

A lake is a folder at any Hadoop-compatible URL (``/path``, ``file:///path``, ``s3a://bucket/lake``,
``hdfs://nn/lake``) with one folder per dataset (see ``console.pipeline.schema``). Listing,
every write and the question whether a dataset exists go through Spark itself, so the same
code serves a local folder and an object store, in this process, on a cluster's driver and
through Spark Connect.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType


def lake_url(url: str | None = None) -> str:
    """The lake's URL: the one given, else DLO_LAKE_URL; a plain path is made absolute."""
    url = url or settings.DLO_LAKE_URL
    if "://" in url:
        return url.rstrip("/")
    return str(Path(url).expanduser().resolve())


def dataset_path(lake: str, name: str) -> str:
    return f"{lake.rstrip('/')}/{name}"


def exists(spark: SparkSession, path: str) -> bool:
    """Whether Spark finds a dataset at ``path``. Asked of Spark itself (its analysis of a read),
    so it answers the same in this process, on a cluster's driver and through Spark Connect,
    where no file system API of the JVM is at hand."""
    try:
        spark.read.schema("probe int").parquet(path).schema  # noqa: B018 - analysing the read is the question
    except AnalysisException as exc:
        if exc.getCondition() == "PATH_NOT_FOUND":
            return False
        raise
    return True


def read(spark: SparkSession, lake: str, name: str, schema: StructType) -> DataFrame:
    """A dataset with its declared schema (partition columns typed by it); empty if not written yet."""
    path = dataset_path(lake, name)
    if not exists(spark, path):
        return spark.createDataFrame([], schema)
    reader = spark.read.schema(schema).option("basePath", path)
    if is_local(path):
        # Parquet's vectored reads fetch a file's ranges in parallel, which pays on an object
        # store; on a local disk Hadoop's checksummed file system hands every range to a new
        # thread and waits for it, which took most of a scan's time on two cores.
        reader = reader.option("parquet.hadoop.vectored.io.enabled", "false")
    return reader.parquet(path)


def is_local(url: str) -> bool:
    """A path on this machine's file system (no scheme, or file:)."""
    return "://" not in url or url.startswith("file:")

