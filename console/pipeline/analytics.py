"""analytics: what became of the letters over the whole history, written back to PostgreSQL.

The history is the lake's letters and audit events plus those of custody not archived yet, as
for ``groups``. Per failure group, per origin (broker and subscription) and over all letters:

* **resolved**: the first audit event that confirmed a replay, a replay from the archive or a
  move of the letter (*replayed*), or marked it failed (*failed*); an edited letter's copy is a
  letter of its own;
* **time to resolution**: from the letter's first failure (else its capture) to that event, in
  whole minutes; the median and the 90th percentile are discrete (the smallest value that half,
  nine tenths of the resolved letters do not exceed: PostgreSQL's ``percentile_disc``);
* **came back**: a replayed letter that died again (a later letter names it as its parent);
* **recurrences**: letters that arrived (were captured) when every earlier letter of their
  group had been resolved: the group had been dealt with, and came back.

Also the busiest origins, consumers and hosts (letters and groups each) and the letters'
arrivals by weekday and hour (UTC).

``compute_analytics`` is the computation up to the driver (the benchmark runs it on a synthetic
lake); ``run_analytics`` feeds it and ``store`` replaces the tables of console.models.analytics.
Percentiles come from a histogram of (key, minutes) made by Spark's hash aggregation and a
running sum over it, so no key's values are ever held in memory together.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, LongType, StringType, StructField, StructType, TimestampType

from console.models import ArrivalCell, BusyName, OutcomeStat
from console.pipeline import lake as lakefs
from console.pipeline.archive import watermark
from console.pipeline.schema import AUDIT, LETTERS, SCHEMAS
from console.pipeline.session import get_spark
from console.pipeline.source import ANALYTICS_LETTERS_SQL, RESOLVING_EVENTS_SQL, keyset

LETTER_INPUT = StructType([
    StructField("id", LongType()),
    StructField("fingerprint", StringType()),
    StructField("origin_queue", StringType()),
    StructField("broker", StringType()),
    StructField("consumer", StringType()),
    StructField("host", StringType()),
    StructField("failed_at", TimestampType()),
    StructField("arrived_at", TimestampType()),
    StructField("parent_id", LongType()),
])
EVENT_INPUT = StructType([
    StructField("id", LongType()),
    StructField("at", TimestampType()),
    StructField("action", StringType()),
    StructField("outcome", StringType()),
    StructField("letter_ids", ArrayType(LongType())),
])
#: (audit action, outcome) -> what the letters it names became.
RESOLVING = {("replay", "confirmed"): "replayed", ("archive_replay", "confirmed"): "replayed",
             ("move", "confirmed"): "replayed", ("mark_failed", "failed"): "failed"}
PERCENTILES = {"median_minutes": 50, "p90_minutes": 90}
#: Busiest names kept per kind.
BUSIEST = 20
#: A moment after every real one: a letter not resolved yet is open "until then".
NEVER = "9999-12-31 00:00:00"


@dataclass
class Analytics:
    outcomes: list[dict] = field(default_factory=list)
    busiest: list[dict] = field(default_factory=list)
    arrivals: list[dict] = field(default_factory=list)


def archived_letters(spark: SparkSession, lake: str) -> DataFrame:
    letters = lakefs.read(spark, lake, LETTERS, SCHEMAS[LETTERS])
    return letters.select(
        "id", "fingerprint", "origin_queue", "broker", "consumer", "host",
        F.coalesce("first_failed_at", "captured_at").alias("failed_at"), F.col("captured_at").alias("arrived_at"),
        "parent_id",
    )


def archived_events(spark: SparkSession, lake: str) -> DataFrame:
    audit = lakefs.read(spark, lake, AUDIT, SCHEMAS[AUDIT])
    return audit.where(F.col("action").isin(sorted({action for action, _ in RESOLVING}))).select(
        *EVENT_INPUT.fieldNames())


def custody_frame(spark: SparkSession, sql: str, after: int, schema: StructType) -> DataFrame:
    rows = [row for batch in keyset(sql, after=after, batch=5000) for row in batch]
    return spark.createDataFrame(rows, schema)


def resolutions(events: DataFrame) -> DataFrame:
    """Per letter id: when it was first resolved and what it became then."""
    became = F.lit(None).cast("string")
    for (action, outcome), kind in RESOLVING.items():
        became = F.when((F.col("action") == action) & (F.col("outcome") == outcome), kind).otherwise(became)
    named = events.select(F.explode("letter_ids").alias("id"), "at", became.alias("became")).where(
        F.col("became").isNotNull())
    return named.groupBy("id").agg(F.min("at").alias("resolved_at"), F.min_by("became", "at").alias("became"))


def per_letter(letters: DataFrame, events: DataFrame) -> DataFrame:
    """Each letter with its resolution, minutes to it, whether it came back, and whether its
    arrival was a recurrence of its group."""
    children = letters.where(F.col("parent_id").isNotNull()).select(
        F.col("parent_id").alias("id")).distinct().withColumn("has_child", F.lit(True))
    joined = letters.join(resolutions(events), on="id", how="left").join(children, on="id", how="left")
    minutes = F.greatest(F.lit(0), F.floor((F.unix_seconds("resolved_at") - F.unix_seconds("failed_at")) / 60))
    # The latest moment any earlier letter of the group stayed open until (unresolved: never).
    earlier = Window.partitionBy("fingerprint").orderBy("arrived_at", "id").rowsBetween(Window.unboundedPreceding, -1)
    open_until = F.max(F.coalesce("resolved_at", F.lit(NEVER).cast("timestamp"))).over(earlier)
    return joined.select(
        "id", "fingerprint", "origin_queue", "broker", "consumer", "host", "arrived_at",
        F.when(F.col("resolved_at").isNotNull(), minutes).cast("long").alias("minutes"),
        (F.col("became") == "replayed").alias("replayed"), (F.col("became") == "failed").alias("failed"),
        ((F.col("became") == "replayed") & F.col("has_child").isNotNull()).alias("came_back"),
        (open_until < F.col("arrived_at")).alias("recurred"),
    )


def _counted(frame: DataFrame, keys: list[str]) -> DataFrame:
    flag = lambda name: F.sum(F.col(name).cast("long"))  # noqa: E731 - a null flag is not counted
    return frame.groupBy(*keys).agg(
        F.sum("letters").alias("letters"), F.sum(F.when(F.col("minutes").isNotNull(), F.col("letters"))).alias("resolved"),
        flag("replayed").alias("replayed"), flag("failed").alias("failed"), flag("came_back").alias("came_back"),
        flag("recurred").alias("recurrences"),
    )


def _percentiles(cube: DataFrame, keys: list[str]) -> DataFrame:
    """The discrete percentiles of minutes per key, from the histogram in ``cube``."""
    histogram = cube.where(F.col("minutes").isNotNull()).groupBy(*keys, "minutes").agg(
        F.sum("letters").alias("n"))
    running = Window.partitionBy(*keys).orderBy("minutes").rowsBetween(Window.unboundedPreceding, 0)
    whole = Window.partitionBy(*keys)
    ranked = histogram.select(*keys, "minutes", F.sum("n").over(running).alias("upto"), F.sum("n").over(whole).alias("all"))
    return ranked.groupBy(*keys).agg(*[
        F.min(F.when(F.col("upto") * 100 >= F.col("all") * percent, F.col("minutes"))).alias(name)
        for name, percent in PERCENTILES.items()
    ])


def compute_analytics(letters: DataFrame, events: DataFrame) -> Analytics:
    """The whole computation on letters shaped like LETTER_INPUT and events like EVENT_INPUT."""
    rows = per_letter(letters, events)
    # One row per group, origin and minutes: every figure but the busiest names comes from it.
    cube = rows.groupBy("fingerprint", "broker", "origin_queue", "minutes").agg(
        F.count(F.lit(1)).alias("letters"), *[F.sum(F.col(flag).cast("long")).alias(flag)
                                              for flag in ("replayed", "failed", "came_back", "recurred")],
    ).cache()
    try:
        outcomes = []
        for kind, keys in ((OutcomeStat.Kind.GROUP, ["fingerprint"]), (OutcomeStat.Kind.ORIGIN, ["broker", "origin_queue"]),
                           (OutcomeStat.Kind.ALL, [])):
            keyed = cube.withColumn("everything", F.lit(1)) if not keys else cube
            keys = keys or ["everything"]
            joined = _counted(keyed, keys).join(_percentiles(keyed, keys), on=keys, how="left")
            for row in joined.collect():
                outcome = row.asDict()
                outcome.pop("everything", None)
                outcome["origin"] = outcome.pop("origin_queue", "")
                outcomes.append({"kind": kind, **outcome})
    finally:
        cube.unpersist()
    return Analytics(outcomes, busiest(letters), arrivals(letters))


def busiest(letters: DataFrame) -> list[dict]:
    """The BUSIEST origins, consumers and hosts by letters, each with its number of groups."""
    found = []
    for kind, keys in (("origin", ["broker", "origin_queue"]), ("consumer", ["consumer"]), ("host", ["host"])):
        named = letters.where(F.col(keys[-1]).isNotNull() & (F.col(keys[-1]) != ""))
        per_group = named.groupBy(*keys, "fingerprint").agg(F.count(F.lit(1)).alias("n"))
        top = per_group.groupBy(*keys).agg(F.sum("n").alias("letters"), F.count(F.lit(1)).alias("groups")) \
            .orderBy(F.desc("letters"), *keys).limit(BUSIEST)
        for row in top.collect():
            found.append({"kind": kind, "name": row[keys[-1]], "broker": row["broker"] if kind == "origin" else "",
                          "letters": row["letters"], "groups": row["groups"]})
    return found


def arrivals(letters: DataFrame) -> list[dict]:
    """Letters by ISO weekday (1 Monday) and hour of their arrival, UTC."""
    weekday = ((F.dayofweek("arrived_at") + 5) % 7 + 1).alias("weekday")  # Spark: 1 is Sunday
    cells = letters.groupBy(weekday, F.hour("arrived_at").alias("hour")).agg(F.count(F.lit(1)).alias("letters"))
    return [row.asDict() for row in cells.collect()]


def run_analytics(lake: str | None = None, *, spark: SparkSession | None = None) -> int:
    """Recompute the analytics of the whole history; returns how many letters they cover."""
    spark = spark or get_spark()
    lake = lakefs.lake_url(lake)
    letters = archived_letters(spark, lake).unionByName(
        custody_frame(spark, ANALYTICS_LETTERS_SQL, watermark(lake, LETTERS), LETTER_INPUT))
    events = archived_events(spark, lake).unionByName(
        custody_frame(spark, RESOLVING_EVENTS_SQL, watermark(lake, AUDIT), EVENT_INPUT))
    return store(compute_analytics(letters, events))


@transaction.atomic
def store(result: Analytics) -> int:
    """Replace the stored analytics with a new computation, in one transaction."""
    now = timezone.now()
    for model in (OutcomeStat, BusyName, ArrivalCell):
        model.objects.all().delete()
    OutcomeStat.objects.bulk_create([
        OutcomeStat(kind=o["kind"], fingerprint=o.get("fingerprint") or "", broker=o.get("broker") or "",
                    origin=o.get("origin") or "", letters=o["letters"], resolved=o["resolved"] or 0,
                    replayed=o["replayed"] or 0, failed=o["failed"] or 0, came_back=o["came_back"] or 0,
                    recurrences=o["recurrences"] or 0, median_minutes=o["median_minutes"],
                    p90_minutes=o["p90_minutes"], computed_at=now)
        for o in result.outcomes
    ], batch_size=2000)
    BusyName.objects.bulk_create([BusyName(**b, computed_at=now) for b in result.busiest])
    ArrivalCell.objects.bulk_create([ArrivalCell(**cell, computed_at=now) for cell in result.arrivals])
    return sum(o["letters"] for o in result.outcomes if o["kind"] == OutcomeStat.Kind.ALL)
