"""The archive as a replay reads it: the letters a frozen selection names, in a fixed order.

The job that replays them (console.jobs.kinds.archive_replay) is requested and run like every
job; this module is only its Spark side. A selection names days ``since``..``until``
(inclusive, UTC), an origin subscription, an exception type or a failure group, and the lake's
letters watermark ``max_id`` at the time it was asked for.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from console.pipeline import lake as lakefs
from console.pipeline.schema import BODIES, LETTERS, SCHEMAS


def _named(spark: SparkSession, selection: dict[str, Any]) -> DataFrame:
    """The archived letters a frozen selection names."""
    letters = lakefs.read(spark, selection["lake"], LETTERS, SCHEMAS[LETTERS])
    letters = letters.where(F.col("id") <= selection["max_id"])
    if selection.get("since"):
        letters = letters.where(F.col("day") >= F.lit(selection["since"]).cast("date"))
    if selection.get("until"):
        letters = letters.where(F.col("day") <= F.lit(selection["until"]).cast("date"))
    if selection.get("origin"):
        letters = letters.where(F.col("origin_queue") == selection["origin"])
    if selection.get("exception"):
        letters = letters.where(F.col("exception_type") == selection["exception"])
    if selection.get("fingerprint"):
        letters = letters.where(F.col("fingerprint") == selection["fingerprint"])
    return letters


def selected_letters(spark: SparkSession, selection: dict[str, Any]) -> DataFrame:
    """The archived letters a frozen selection names, each with its body (null once erased)."""
    letters = _named(spark, selection)
    bodies = lakefs.read(spark, selection["lake"], BODIES, SCHEMAS[BODIES]).select(
        F.col("sha256").alias("body_sha256"), "body")
    return letters.select(
        "day", "broker", "place", "id", "broker_id", "place_scope", "origin_queue", "headers", "properties",
        "body_sha256",
    ).join(bodies, on="body_sha256", how="left")


def per_place(spark: SparkSession, selection: dict[str, Any]) -> dict[int, int]:
    """How many archived letters the selection names in each dead place (by place id)."""
    return per_place_and_origins(spark, selection)[0]


def per_place_and_origins(spark: SparkSession, selection: dict[str, Any]) -> tuple[dict[int, int], list[list]]:
    """How many archived letters the selection names in each dead place (by place id), and the
    origins a replay of them publishes into, ``[broker_id, origin_queue, place_scope]`` each
    (sorted; letters of unknown origin left out): one pass over the lake."""
    rows = _named(spark, selection).groupBy("place", "broker_id", "origin_queue", "place_scope").count().collect()
    counts: dict[int, int] = {}
    origins = set()
    for row in rows:
        counts[int(row["place"])] = counts.get(int(row["place"]), 0) + int(row["count"])
        if row["origin_queue"] and row["broker_id"] is not None:
            origins.add((int(row["broker_id"]), row["origin_queue"], row["place_scope"] or ""))
    return counts, [list(origin) for origin in sorted(origins)]


def batches(letters: DataFrame, cursor: int, size: int) -> Iterator[tuple[list, int]]:
    """(batch, position after it) in partition order (day, broker, place; letters by id
    inside), starting after ``cursor`` letters: the same order on every run of a job."""
    partitions = letters.select("day", "broker", "place").distinct().orderBy("day", "broker", "place").collect()
    position = 0
    for part in partitions:
        in_part = letters.where(
            (F.col("day") == part.day) & F.col("broker").eqNullSafe(part.broker) & (F.col("place") == part.place))
        count = in_part.count()
        if position + count <= cursor:
            position += count
            continue
        batch: list = []
        for row in in_part.orderBy("id").toLocalIterator():
            position += 1
            if position <= cursor:
                continue
            batch.append(row)
            if len(batch) == size:
                yield batch, position
                batch = []
        if batch:
            yield batch, position
