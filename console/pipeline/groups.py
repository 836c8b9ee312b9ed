"""groups: failure fingerprints over the whole history, written back to PostgreSQL.

The history is the lake's letters plus the custody letters above the letters watermark (not
archived yet), so a group counts every letter once whether or not it has been archived or
since deleted from custody. Per fingerprint: count, first and last seen (the letter's last
failure, else its capture), the exception of its first letter as a sample, its origins,
brokers, and the consumers and servers that framework headers name; per day, its count.

``compute_groups`` is the whole computation up to the driver (the benchmark runs it on
synthetic letters); ``run_groups`` feeds it and stores the result in
``FailureGroupHistory``/``FailureGroupDay``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from django.db import transaction
from django.utils import timezone
from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import DateType, LongType, StringType, StructField, StructType, TimestampType

from console.models import FailureGroupDay, FailureGroupHistory
from console.pipeline import lake as lakefs
from console.pipeline.archive import watermark
from console.pipeline.schema import LETTERS, SCHEMAS
from console.pipeline.session import get_spark
from console.pipeline.source import GROUP_COLUMNS_SQL, custody_frame

# The columns the query needs, the same from the lake and from custody. ``captured_day`` is the
# letter's day partition in the lake, so that finding the groups' first letters reads few files.
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
    StructField("captured_day", DateType()),
])
SAMPLE_CHARS = 2000
# Input column -> the name whose set each group keeps.
NAMES = {"origin_queue": "origin", "broker": "broker", "consumer": "consumer", "host": "host"}
EPOCH = date(1970, 1, 1)


@dataclass(frozen=True, slots=True)
class Group:
    fingerprint: str
    count: int
    first_seen: datetime
    last_seen: datetime
    exception_type: str | None
    sample_message: str | None
    reason: str | None
    origins: list[str]
    brokers: list[str]
    consumers: list[str]
    hosts: list[str]


@dataclass(frozen=True, slots=True)
class GroupDay:
    fingerprint: str
    day: date
    count: int


def archived_letters(spark: SparkSession, lake: str) -> DataFrame:
    """The lake's letters as the query's input."""
    letters = lakefs.read(spark, lake, LETTERS, SCHEMAS[LETTERS])
    return letters.select(
        "id", "fingerprint", "exception_type", "exception_message", "reason", "origin_queue", "broker",
        "consumer", "host", F.coalesce("last_failed_at", "captured_at").alias("seen_at"),
        F.col("day").alias("captured_day"),
    )


def fingerprint_summaries(letters: DataFrame) -> DataFrame:
    """One row per fingerprint of letters shaped like GROUP_INPUT: count, first and last seen,
    its first letter (id and day partition), the sorted name sets, and the counts per UTC day as
    two arrays in step (``day_numbers``, days since 1970-01-01, and ``day_counts``).

    The letters are aggregated once, by fingerprint, day and names together, with fixed-width
    results only, so Spark's generated hash aggregation does it (a string carried through it,
    such as the first letter's message, would push it onto the sort-based path); one row per
    letter goes through it, where grouping sets over the letters would send each letter twice.
    The much smaller result is then split by grouping sets into (fingerprint, day) for the
    counts and (fingerprint, names) for the sets, and folded into one row per fingerprint with
    the days nested, so the driver collects a row per group rather than per group and day.
    Empty names are dropped at the end, on that small result, rather than tested on every letter.
    """
    micros_a_day = 86_400_000_000
    keyed = letters.select(
        "fingerprint", F.floor(F.unix_micros("seen_at") / micros_a_day).cast("int").alias("day"),
        *[F.col(column).alias(name) for column, name in NAMES.items()], "seen_at", "id", "captured_day",
    )
    names = list(NAMES.values())
    combinations = keyed.groupBy("fingerprint", "day", *names).agg(
        F.count(F.lit(1)).alias("count"), F.min("seen_at").alias("first_seen"), F.max("seen_at").alias("last_seen"),
        F.min("id").alias("first_id"), F.min_by("captured_day", "id").alias("first_day"),
    )
    summary = combinations.groupingSets(
        [["fingerprint", "day"], ["fingerprint", *names]], "fingerprint", "day", *names,
    ).agg(
        F.sum("count").alias("count"), F.min("first_seen").alias("first_seen"), F.max("last_seen").alias("last_seen"),
        F.min("first_id").alias("first_id"), F.min_by("first_day", "first_id").alias("first_day"),
    )
    by_day = F.col("day").isNotNull()
    folded = summary.groupBy("fingerprint").agg(
        F.sum(F.when(by_day, F.col("count"))).alias("count"), F.min("first_seen").alias("first_seen"),
        F.max("last_seen").alias("last_seen"), F.min("first_id").alias("first_id"),
        F.min_by("first_day", "first_id").alias("first_day"),
        *[F.array_sort(F.array_remove(F.collect_set(name), "")).alias(f"{name}s") for name in names],
        F.array_sort(F.collect_list(F.when(by_day, F.struct("day", "count")))).alias("days"),
    )
    return folded.select(
        "*", F.transform("days", lambda d: d["day"]).alias("day_numbers"),
        F.transform("days", lambda d: d["count"]).alias("day_counts"),
    ).drop("days")


def compute_groups(letters: DataFrame) -> tuple[list[Group], list[GroupDay]]:
    """(groups, days) of letters shaped like GROUP_INPUT, on the driver: two Spark queries, the
    summaries collected once, then the groups' first letters looked up by id."""
    summaries = fingerprint_summaries(letters).collect()
    samples = first_letters(letters, summaries)
    groups = [
        Group(row.fingerprint, row["count"], row.first_seen, row.last_seen,  # type: ignore[call-arg]  # sample's 3
              *samples.get(row.first_id, (None, None, None)), row.origins, row.brokers, row.consumers, row.hosts)
        for row in summaries
    ]
    days = [GroupDay(row.fingerprint, EPOCH + timedelta(days=number), count)
            for row in summaries for number, count in zip(row.day_numbers, row.day_counts, strict=True)]
    return groups, days


def first_letters(letters: DataFrame, summaries: list[Row]) -> dict[int, tuple]:
    """(exception type, message cut to SAMPLE_CHARS, reason) of each group's first letter, by id.

    The filter names the first letters' day partitions and ids as literals, so Spark lists and
    reads only those days of the lake and Parquet's min/max statistics skip the row groups that
    cannot hold the ids. It is one SQL string because ``Column.isin`` sends each value to the JVM
    on its own (thousands of round trips).
    """
    if not summaries:
        return {}
    days = {row.first_day for row in summaries}
    listed = ", ".join(f"DATE'{day}'" for day in sorted(days - {None})) or "NULL"
    on_days = f"(captured_day IN ({listed}) OR captured_day IS NULL)" if None in days else f"captured_day IN ({listed})"
    ids = ", ".join(str(row.first_id) for row in summaries)
    wanted = letters.where(F.expr(f"{on_days} AND id IN ({ids})")).select(
        "id", "exception_type", F.substring("exception_message", 1, SAMPLE_CHARS).alias("sample_message"), "reason")
    return {row.id: (row.exception_type, row.sample_message, row.reason) for row in wanted.collect()}


def run_groups(lake: str | None = None, *, spark: SparkSession | None = None) -> int:
    """Recompute the failure groups of the whole history; returns how many groups there are."""
    spark = spark or get_spark()
    lake = lakefs.lake_url(lake)
    unarchived = custody_frame(spark, GROUP_COLUMNS_SQL, watermark(lake, LETTERS), GROUP_INPUT)
    history = archived_letters(spark, lake).unionByName(unarchived)
    return store(*compute_groups(history))


def aware(moment: datetime) -> datetime:
    """PySpark hands timestamps back as naive local time: make them aware again."""
    return moment.astimezone(UTC) if moment.tzinfo is None else moment


@transaction.atomic
def store(groups: list[Group], days: list[GroupDay]) -> int:
    """Replace the stored history with a new computation, in one transaction."""
    now = timezone.now()
    FailureGroupHistory.objects.all().delete()
    rows = FailureGroupHistory.objects.bulk_create(
        [
            FailureGroupHistory(
                fingerprint=g.fingerprint, count=g.count, first_seen=aware(g.first_seen), last_seen=aware(g.last_seen),
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
        [FailureGroupDay(group_id=ids[d.fingerprint], day=d.day, count=d.count) for d in days],
        batch_size=5000,
    )
    return len(rows)
