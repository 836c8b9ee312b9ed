"""analytics: what became of the letters over the whole history, written back to PostgreSQL.

The history is the lake's letters and audit events plus those of custody not archived yet, as
for ``groups``. Per failure group, per origin (broker and subscription) and over all letters:

* **resolved**: the first audit event that confirmed a replay, a replay from the archive or a
  move of the letter (*replayed*), or marked it failed (*failed*); an edited letter's copy is a
  letter of its own;
* **time to resolution**: from the letter's first failure (else its capture) to that event, in
  whole minutes; its median and 90th percentile interpolate between the two nearest letters
  (PostgreSQL's ``percentile_cont``);
* **came back**: a replayed letter that died again (a later letter names it as its parent);
* **recurrences**: letters that arrived (were captured) when every earlier letter of their
  group had been resolved: the group had been dealt with, and came back.

Also the busiest origins, consumers and hosts (letters and groups each), the letters' arrivals
by weekday and hour (UTC), and each objective's attainment per week of capture
(console.models.ObjectiveWeek), back as far as the lake goes.

``compute_analytics`` is the computation up to the driver (the benchmark runs it on a synthetic
lake); ``run_analytics`` feeds it and ``store`` replaces the tables of console.models.analytics.
Percentiles are Spark's exact ``percentile`` over a cube of (group, origin, minutes) with the
letters of each row as its weight, so each key holds one count per distinct minute, never a
value per letter.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone
from pyspark.sql import DataFrame, SparkSession, Window
from pyspark.sql import functions as F
from pyspark.sql.types import ArrayType, LongType, StringType, StructField, StructType, TimestampType

from console.models import ArrivalCell, BusyName, DeadPlace, LetterState, Objective, ObjectiveWeek, OutcomeStat
from console.pipeline import lake as lakefs
from console.pipeline.archive import watermark
from console.pipeline.outcomes import Resolving
from console.pipeline.schema import AUDIT, LETTERS, SCHEMAS
from console.pipeline.session import get_spark
from console.pipeline.source import ANALYTICS_LETTERS_SQL, custody_frame

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
    StructField("place", LongType()),
])
EVENT_INPUT = StructType([
    StructField("id", LongType()),
    StructField("at", TimestampType()),
    StructField("action", StringType()),
    StructField("outcome", StringType()),
    StructField("letter_ids", ArrayType(LongType())),
])
def resolving_events_sql(resolving: Resolving) -> str:
    """The audit events not yet in the lake that may resolve letters."""
    actions = sorted({action for action, _ in resolving})
    if not all(action.isidentifier() for action in actions):  # kinds' names: never a quote in them
        raise ValueError(f"not an audit action: {actions!r}")
    return f"""
SELECT a.id, a.at, a.action, a.outcome, a.letter_ids
FROM console_auditevent a
WHERE a.id > %s AND a.action = ANY('{{{",".join(actions)}}}'::text[])
ORDER BY a.id LIMIT %s
"""


PERCENTILES = {"median_minutes": 0.5, "p90_minutes": 0.9}
#: Busiest names kept per kind.
BUSIEST = 20
#: The three ways outcomes are keyed: by the cube's group number, its origin number, or not.
KEYINGS = {OutcomeStat.Kind.GROUP: "group", OutcomeStat.Kind.ORIGIN: "origin", OutcomeStat.Kind.ALL: ""}
#: grouping_id() of each grouping set of (group, origin): a bit set for each column left out.
GROUPING_SETS = {0b01: OutcomeStat.Kind.GROUP, 0b10: OutcomeStat.Kind.ORIGIN, 0b11: OutcomeStat.Kind.ALL}
#: Each (fingerprint, broker, origin) of the letters and the numbers the driver gave its group
#: and its origin.
KEYS = StructType([
    StructField("fingerprint", StringType()), StructField("broker", StringType()),
    StructField("origin_queue", StringType()), StructField("group", LongType()), StructField("origin", LongType()),
])
#: What a resolution made of a letter, as a number through the shuffles.
REPLAYED, FAILED = 1, 2
CODES = {LetterState.REPLAYED: REPLAYED, LetterState.FAILED: FAILED}
#: A moment after every real one: a letter not resolved yet is open "until then".
NEVER = "9999-12-31 00:00:00"


#: What an objective is about, as the analytics read the letters: one row per place it covers (an
#: origin's objective covers each place of its broker and scope, its letters from that origin).
TARGETS = StructType([
    StructField("objective", LongType()), StructField("place", LongType()), StructField("origin_queue", StringType()),
    StructField("seconds", LongType()),
])


@dataclass
class Analytics:
    outcomes: list[dict] = field(default_factory=list)
    busiest: list[dict] = field(default_factory=list)
    arrivals: list[dict] = field(default_factory=list)
    objective_weeks: list[dict] = field(default_factory=list)


def archived_letters(spark: SparkSession, lake: str) -> DataFrame:
    letters = lakefs.read(spark, lake, LETTERS, SCHEMAS[LETTERS])
    return letters.select(
        "id", "fingerprint", "origin_queue", "broker", "consumer", "host",
        F.coalesce("first_failed_at", "captured_at").alias("failed_at"), F.col("captured_at").alias("arrived_at"),
        "parent_id", "place",
    )


def archived_events(spark: SparkSession, lake: str, resolving: Resolving) -> DataFrame:
    audit = lakefs.read(spark, lake, AUDIT, SCHEMAS[AUDIT])
    return audit.where(F.col("action").isin(sorted({action for action, _ in resolving}))).select(
        *EVENT_INPUT.fieldNames())


def resolutions(events: DataFrame, resolving: Resolving) -> DataFrame:
    """Per letter id: when it was first resolved and what it became then (REPLAYED or FAILED)."""
    became = F.lit(None).cast("int")
    for (action, outcome), state in resolving.items():
        code = CODES[LetterState(state)]
        became = F.when((F.col("action") == action) & (F.col("outcome") == outcome), code).otherwise(became)
    named = events.select(F.explode("letter_ids").alias("id"), "at", became.alias("became")).where(
        F.col("became").isNotNull())
    return named.groupBy("id").agg(F.min("at").alias("resolved_at"), F.min_by("became", "at").alias("became"))


def per_letter(letters: DataFrame, resolved: DataFrame, keys: DataFrame) -> DataFrame:
    """Each letter as numbers only: its group and origin (ids from ``keys``), minutes to its
    resolution, whether it was replayed or failed, came back, and whether its arrival was a
    recurrence of its group. Numbers, not names, go through the joins and the window's sort."""
    narrow = letters.join(F.broadcast(keys), on=["fingerprint", "broker", "origin_queue"]).select(
        "id", "group", "origin", "failed_at", "arrived_at", "parent_id")
    children = narrow.where(F.col("parent_id").isNotNull()).select(
        F.col("parent_id").alias("id")).distinct().withColumn("has_child", F.lit(True))
    joined = narrow.join(resolved, on="id", how="left").join(children, on="id", how="left")
    minutes = F.greatest(F.lit(0), F.floor((F.unix_seconds("resolved_at") - F.unix_seconds("failed_at")) / 60))
    # The latest moment any earlier letter of the group stayed open until (unresolved: never).
    earlier = Window.partitionBy("group").orderBy("arrived_at", "id").rowsBetween(Window.unboundedPreceding, -1)
    open_until = F.max(F.coalesce("resolved_at", F.lit(NEVER).cast("timestamp"))).over(earlier)
    return joined.select(
        "group", "origin", F.when(F.col("resolved_at").isNotNull(), minutes).cast("long").alias("minutes"),
        (F.col("became") == REPLAYED).alias("replayed"), (F.col("became") == FAILED).alias("failed"),
        ((F.col("became") == REPLAYED) & F.col("has_child").isNotNull()).alias("came_back"),
        (open_until < F.col("arrived_at")).alias("recurred"),
    )


def outcomes(cube: DataFrame) -> list[dict]:
    """Per group, per origin and over all (``kind`` and ``key``, the group's or origin's number,
    0 for all): the counts, and the percentiles of minutes weighted by the cube's letters. One
    aggregation of the cube by grouping sets, so the cube is computed once."""
    flag = lambda name: F.sum(F.col(name)).alias(name)  # noqa: E731
    counted = cube.groupingSets([["group"], ["origin"], []], "group", "origin").agg(
        F.sum("letters").alias("letters"),
        F.sum(F.when(F.col("minutes").isNotNull(), F.col("letters"))).alias("resolved"),
        flag("replayed"), flag("failed"), flag("came_back"), F.sum("recurred").alias("recurrences"),
        # Exact, weighted by each (key, minutes) row's letters; null where nothing was resolved.
        F.percentile("minutes", list(PERCENTILES.values()), F.col("letters")).alias("percentiles"),
        F.grouping_id().alias("set"),
    )
    found = []
    for row in counted.collect():
        outcome = row.asDict()
        kind = GROUPING_SETS[outcome.pop("set")]
        numbers = {"group": outcome.pop("group"), "origin": outcome.pop("origin"), "": 0}
        percentiles = outcome.pop("percentiles") or [None] * len(PERCENTILES)
        found.append({"kind": kind, "key": numbers[KEYINGS[kind]], **outcome,
                      **dict(zip(PERCENTILES, percentiles, strict=True))})
    return found


def objective_weeks(letters: DataFrame, resolved: DataFrame, targets: list[tuple], now: datetime) -> list[dict]:
    """Per objective (``targets``: TARGETS rows) and week of capture (its Monday, UTC): the letters
    whose outcome is known at ``now`` (resolved, or open longer than D) and those resolved within
    D of their capture. One join of the letters to the few targets, one aggregation."""
    about = letters.sparkSession.createDataFrame(targets, TARGETS)
    matched = letters.join(F.broadcast(about), on=(letters.place == about.place) & (
        about.origin_queue.isNull() | (letters.origin_queue == about.origin_queue))).select(
        "id", "objective", "seconds", "arrived_at")
    waited = F.unix_seconds("resolved_at") - F.unix_seconds("arrived_at")
    late = F.unix_seconds("arrived_at") < F.lit(int(now.timestamp())) - F.col("seconds")
    counted = matched.join(resolved, on="id", how="left").groupBy(
        "objective", F.to_date(F.date_trunc("week", "arrived_at")).alias("week")).agg(
        F.sum((F.col("resolved_at").isNotNull() | late).cast("long")).alias("known"),
        F.sum((F.col("resolved_at").isNotNull() & (waited <= F.col("seconds"))).cast("long")).alias("in_time"))
    return [row.asDict() for row in counted.collect()]


def compute_analytics(letters: DataFrame, events: DataFrame, resolving: Resolving,
                      targets: Sequence[tuple] = (), now: datetime | None = None) -> Analytics:
    """The whole computation on letters shaped like LETTER_INPUT and events like EVENT_INPUT,
    which ``resolving`` reads.

    First one aggregation of the letters by grouping sets gives the busiest names, the arrivals
    and every (fingerprint, broker, origin) there is, which the driver numbers; then the letters,
    joined to those numbers, go through the resolutions, the window and into a cube of (group,
    origin, minutes), from which one more aggregation gives every outcome figure."""
    letters = letters.withColumns({name: F.coalesce(name, F.lit(""))
                                   for name in ("fingerprint", "broker", "origin_queue")})
    combos, busiest, cells = names_and_arrivals(letters)
    groups = {fingerprint: number for number, fingerprint in enumerate(sorted({c[2] for c in combos}))}
    origins = {origin: number for number, origin in enumerate(sorted({c[:2] for c in combos}))}
    keys = letters.sparkSession.createDataFrame(
        [(fingerprint, broker, origin, groups[fingerprint], origins[(broker, origin)])
         for broker, origin, fingerprint in combos], KEYS)
    resolved = resolutions(events, resolving)
    cube = per_letter(letters, resolved, keys).groupBy("group", "origin", "minutes").agg(
        F.count(F.lit(1)).alias("letters"), *[F.sum(F.col(flag).cast("long")).alias(flag)
                                              for flag in ("replayed", "failed", "came_back", "recurred")],
    )
    by_number: dict[str, dict[int, dict[str, Any]]] = {
        OutcomeStat.Kind.GROUP: {n: {"fingerprint": fp} for fp, n in groups.items()},
        OutcomeStat.Kind.ORIGIN: {n: {"broker": b, "origin": o} for (b, o), n in origins.items()},
        OutcomeStat.Kind.ALL: {0: {}},
    }
    found = outcomes(cube)
    for outcome in found:
        outcome.update(by_number[outcome["kind"]][outcome.pop("key")])
    weeks = objective_weeks(letters, resolved, list(targets), now or timezone.now()) if targets else []
    return Analytics(found, busiest, cells, weeks)


def names_and_arrivals(letters: DataFrame) -> tuple[list[tuple], list[dict], list[dict]]:
    """Every (broker, origin, fingerprint) of the letters; the BUSIEST origins, consumers and
    hosts by letters, each with its number of groups; and the letters by ISO weekday (1 Monday)
    and hour of their arrival, UTC. One aggregation by grouping sets, finished on the driver."""
    weekday = ((F.dayofweek("arrived_at") + 5) % 7 + 1).alias("weekday")  # Spark's 1 is Sunday
    keyed = letters.select("broker", "origin_queue", "consumer", "host", "fingerprint", weekday,
                           F.hour("arrived_at").alias("hour"))
    sets = {"origin": ["broker", "origin_queue", "fingerprint"], "consumer": ["consumer", "fingerprint"],
            "host": ["host", "fingerprint"], "arrival": ["weekday", "hour"]}
    columns = ["broker", "origin_queue", "consumer", "host", "fingerprint", "weekday", "hour"]
    # All seven at once first (a plain hash aggregation, which shrinks the letters to their few
    # distinct combinations), then the grouping sets over those: each set is a pass over the
    # combinations, not over the letters.
    combined = keyed.groupBy(*columns).agg(F.count(F.lit(1)).alias("n"))
    counted = combined.groupingSets(list(sets.values()), *columns).agg(
        F.sum("n").alias("n"), F.grouping_id().alias("set"))
    # grouping_id: a bit per column, the first column highest, set where the column is left out.
    set_of = {sum(1 << (len(columns) - 1 - i) for i, c in enumerate(columns) if c not in kept): kind
              for kind, kept in sets.items()}
    combos, cells = [], []
    per_name: dict[Any, Any] = {}
    for row in counted.collect():
        kind = set_of[row.set]
        if kind == "arrival":
            cells.append({"weekday": row.weekday, "hour": row.hour, "letters": row.n})
            continue
        if kind == "origin":
            combos.append((row.broker, row.origin_queue, row.fingerprint))
        name, broker = (row.origin_queue, row.broker) if kind == "origin" else (row[kind], "")
        if name:
            totals = per_name.setdefault((kind, name, broker), [0, 0])
            totals[0] += row.n
            totals[1] += 1
    busiest = []
    for kind in ("origin", "consumer", "host"):
        named = sorted((-count, broker, name, groups) for (k, name, broker), (count, groups) in per_name.items()
                       if k == kind)
        busiest += [{"kind": kind, "name": name, "broker": broker, "letters": -negative, "groups": groups}
                    for negative, broker, name, groups in named[:BUSIEST]]
    return combos, busiest, cells


def run_analytics(lake: str | None = None, *, resolving: Resolving, spark: SparkSession | None = None) -> int:
    """Recompute the analytics of the whole history; returns how many letters they cover."""
    spark = spark or get_spark()
    lake = lakefs.lake_url(lake)
    letters = archived_letters(spark, lake).unionByName(
        custody_frame(spark, ANALYTICS_LETTERS_SQL, watermark(lake, LETTERS), LETTER_INPUT))
    events = archived_events(spark, lake, resolving).unionByName(
        custody_frame(spark, resolving_events_sql(resolving), watermark(lake, AUDIT), EVENT_INPUT))
    return store(compute_analytics(letters, events, resolving, objective_targets(), timezone.now()))


def objective_targets() -> list[tuple]:
    """The objectives on places and origins as TARGETS rows. An objective on a view is not among
    them: its filter is PostgreSQL's (console.services.selection), not the lake's."""
    rows: list[tuple] = []
    for objective in Objective.objects.filter(view__isnull=True).select_related("origin"):
        if objective.place_id is not None:
            rows.append((objective.pk, objective.place_id, None, objective.seconds))
            continue
        origin = objective.origin
        assert origin is not None  # one target (a constraint)
        rows += [(objective.pk, place, origin.name, objective.seconds) for place in DeadPlace.objects.filter(
            broker_id=origin.broker_id, scope=origin.scope).values_list("pk", flat=True)]
    return rows


@transaction.atomic
def store(result: Analytics) -> int:
    """Replace the stored analytics with a new computation, in one transaction."""
    now = timezone.now()
    for model in (OutcomeStat, BusyName, ArrivalCell, ObjectiveWeek):
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
    alive = set(Objective.objects.values_list("pk", flat=True))  # one deleted meanwhile has no weeks
    ObjectiveWeek.objects.bulk_create([
        ObjectiveWeek(objective_id=week["objective"], week=week["week"], known=week["known"] or 0,
                      in_time=week["in_time"] or 0, computed_at=now)
        for week in result.objective_weeks if week["objective"] in alive], batch_size=2000)
    return sum(o["letters"] for o in result.outcomes if o["kind"] == OutcomeStat.Kind.ALL)
