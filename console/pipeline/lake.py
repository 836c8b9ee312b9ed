"""Where the lake is and the few file operations the pipeline needs on it.

A lake is a folder at any Hadoop-compatible URL (``/path``, ``file:///path``, ``s3a://bucket/lake``,
``hdfs://nn/lake``) with one folder per dataset (see ``console.pipeline.schema``). Listing,
deleting and renaming go through Hadoop's FileSystem API in the JVM, so the same code serves
a local folder and an object store.
"""

from __future__ import annotations

from pathlib import Path

from django.conf import settings
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


def _fs_and_path(spark: SparkSession, path: str):
    jvm = spark.sparkContext._jvm
    hadoop_path = jvm.org.apache.hadoop.fs.Path(path)
    return hadoop_path.getFileSystem(spark.sparkContext._jsc.hadoopConfiguration()), hadoop_path


def exists(spark: SparkSession, path: str) -> bool:
    fs, hadoop_path = _fs_and_path(spark, path)
    return bool(fs.exists(hadoop_path))


def delete(spark: SparkSession, path: str) -> None:
    fs, hadoop_path = _fs_and_path(spark, path)
    if fs.exists(hadoop_path):
        fs.delete(hadoop_path, True)


def rename(spark: SparkSession, source: str, target: str) -> None:
    """Move a folder into place (its parent is made first); the target must not exist."""
    fs, source_path = _fs_and_path(spark, source)
    _, target_path = _fs_and_path(spark, target)
    fs.mkdirs(target_path.getParent())
    if not fs.rename(source_path, target_path):
        raise OSError(f"could not rename {source} to {target}")


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

