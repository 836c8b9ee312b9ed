"""groups: failure fingerprints over the whole history, written back to PostgreSQL.

The history is the lake's letters plus the custody letters above the letters watermark (not
archived yet), so a group counts every letter once whether or not it has been archived or
since deleted from custody. Per fingerprint: count, first and last seen (the letter's last
failure, else its capture), the exception of its first letter as a sample, its origins,
brokers, and the consumers and servers that framework headers name; per day, its count.

``compute_groups`` is the query itself (the benchmark runs it on synthetic letters);
``run_groups`` feeds it and stores the result in ``FailureGroupHistory``/``FailureGroupDay``.
"""

from __future__ import annotations

from datetime import datetime, timezone as dt_timezone

from django.db import transaction
from django.utils import timezone
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType, TimestampType

from console.models import FailureGroupDay, FailureGroupHistory
from console.pipeline import lake as lakefs
from console.pipeline.archive import watermark
from console.pipeline.schema import LETTERS, SCHEMAS
from console.pipeline.session import get_spark
from console.pipeline.source import GROUP_COLUMNS_SQL, keyset

# The columns the query needs, the same from the lake and from custody.
GROUP_INPUT = StructType([
    StructField("id", LongType()),
    StructField("fingerprint", StringType()),
    StructField("exception_type", StringType()),
    StructField("exception_message", StringType()),
    StructField("reason", StringType()),
    StructField("origin_queue", StringType()),
    StructField("broker", StringType()),
    StructField("consumer", StringType()),
    StructField("host", StringType()),
    StructField("seen_at", TimestampType()),
])
SAMPLE_CHARS = 2000


def _named(column: str):
    """Empty text is no name: leave it out of the sets."""
    return F.when(F.col(column) != "", F.col(column))


def archived_letters(spark: SparkSession, lake: str) -> DataFrame:
    """The lake's letters as the query's input."""
    letters = lakefs.read(spark, lake, LETTERS, SCHEMAS[LETTERS])
    return letters.select(
        "id", "fingerprint", "exception_type", "exception_message", "reason", "origin_queue", "broker",
        "consumer", "host", F.coalesce("last_failed_at", "captured_at").alias("seen_at"),
    )


def custody_letters(spark: SparkSession, after: int) -> DataFrame:
    """Custody letters above the watermark, read from PostgreSQL."""
    rows = [row for batch in keyset(GROUP_COLUMNS_SQL, after=after, batch=5000) for row in batch]
    return spark.createDataFrame(rows, GROUP_INPUT)


def compute_groups(letters: DataFrame) -> tuple[DataFrame, DataFrame]:
    """(groups, days) from letters shaped like GROUP_INPUT.

    One pass over the letters aggregates them by two grouping sets at once, (fingerprint, day)
    for the counts and times, and (fingerprint, origin, broker, consumer, host) for the names,
    with fixed-width results only, so Spark's fast hash aggregation does it. That result is
    small and materialised once; both outputs come from it. The sample exception is the
    group's first letter, fetched by id in a second, narrow pass (carrying strings through the
    big aggregation would push it onto the slow object-hash path).
    """
    names = ("origin", "broker", "consumer", "host")
    keyed = letters.select(
        "fingerprint", F.to_date("seen_at").alias("day"), _named("origin_queue").alias("origin"),
        _named("broker").alias("broker"), _named("consumer").alias("consumer"), _named("host").alias("host"),
        "seen_at", "id",
    )
    summary = (
        keyed.groupingSets([["fingerprint", "day"], ["fingerprint", *names]], "fingerprint", "day", *names)
        .agg(F.count(F.lit(1)).alias("count"), F.min("seen_at").alias("first_seen"),
             F.max("seen_at").alias("last_seen"), F.min("id").alias("first_id"))
        .localCheckpoint()
    )
    by_day = summary.where(F.col("day").isNotNull())
    days = by_day.select("fingerprint", "day", "count")
    totals = by_day.groupBy("fingerprint").agg(
        F.sum("count").alias("count"), F.min("first_seen").alias("first_seen"),
        F.max("last_seen").alias("last_seen"), F.min("first_id").alias("first_id"),
    )
    named = summary.where(F.col("day").isNull()).groupBy("fingerprint").agg(
        *[F.array_sort(F.collect_set(name)).alias(f"{name}s") for name in names])
    samples = letters.select(
        F.col("id").alias("first_id"), "exception_type",
        F.substring("exception_message", 1, SAMPLE_CHARS).alias("sample_message"), "reason",
    ).join(F.broadcast(totals.select("first_id")), on="first_id", how="left_semi")
    groups = (
        totals.join(named, on="fingerprint", how="left")
        .join(samples, on="first_id", how="left")
        .select("fingerprint", "count", "first_seen", "last_seen", "exception_type", "sample_message", "reason",
                "origins", "brokers", "consumers", "hosts")
    )
    return groups, days


def run_groups(lake: str | None = None, *, spark: SparkSession | None = None) -> int:
    """Recompute the failure groups of the whole history; returns how many groups there are."""
    spark = spark or get_spark()
    lake = lakefs.lake_url(lake)
    history = archived_letters(spark, lake).unionByName(custody_letters(spark, watermark(lake, LETTERS)))
    groups, days = compute_groups(history)
    return store(groups.collect(), days.collect())


def aware(moment: datetime) -> datetime:
    """PySpark hands timestamps back as naive local time: make them aware again."""
    return moment.astimezone(dt_timezone.utc) if moment.tzinfo is None else moment


@transaction.atomic
def store(groups: list, days: list) -> int:
    """Replace the stored history with a new computation, in one transaction."""
    now = timezone.now()
    FailureGroupHistory.objects.all().delete()
    rows = FailureGroupHistory.objects.bulk_create(
        [
            FailureGroupHistory(
                fingerprint=g.fingerprint, count=g["count"], first_seen=aware(g.first_seen), last_seen=aware(g.last_seen),
                exception_type=(g.exception_type or "")[:500], sample_message=g.sample_message or "",
                reason=(g.reason or "")[:50], origins=list(g.origins), brokers=list(g.brokers),
                consumers=list(g.consumers), hosts=list(g.hosts), computed_at=now,
            )
            for g in groups
        ],
        batch_size=1000,
    )
    ids = {row.fingerprint: row.pk for row in rows}
    FailureGroupDay.objects.bulk_create(
        [FailureGroupDay(group_id=ids[d.fingerprint], day=d.day, count=d["count"]) for d in days],
        batch_size=5000,
    )
    return len(rows)
