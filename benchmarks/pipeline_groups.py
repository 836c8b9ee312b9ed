"""Failure groups on Spark against DuckDB, on the same synthetic lake.

    .venv/bin/python benchmarks/pipeline_groups.py                 # 1,000,000 and 10,000,000 letters
    .venv/bin/python benchmarks/pipeline_groups.py --sizes 100000  # a quick look

For each size, letters are generated straight to Parquet in the lake's layout (letters/day=/
broker=/place=, no PostgreSQL), then the pipeline's own query (console.pipeline.groups:
``archived_letters`` + ``compute_groups``, both results collected to the driver, as
``run_groups`` does) is timed on Spark ``local[*]``, and the same query in SQL on DuckDB over
the same files. Spark is warmed up once on the smallest lake first (JIT, first-query costs),
so the times compare the queries, not the start-up. Each size is run ``--repeat`` times (3),
Spark and DuckDB in turn so both see the same load on a shared machine, and each engine's best
time is shown. Prints the times, Spark/DuckDB, and how the time grows with 10x the letters.
Targets: 10M under 120 s, at most 3x DuckDB, 10x letters at most 11x time.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
os.environ.setdefault("DEBUG", "true")
os.environ.setdefault("DATABASE_URL", "postgres://unused@127.0.0.1:1/unused")  # never connected to

GROUPS = 2_000
DAYS = 30

DUCKDB_GROUPS = """
SELECT fingerprint, count(*) AS count, min(seen_at) AS first_seen, max(seen_at) AS last_seen,
       arg_min(exception_type, id) AS exception_type, substr(arg_min(exception_message, id), 1, 2000) AS sample,
       arg_min(reason, id) AS reason,
       list_sort(list(DISTINCT origin_queue) FILTER (WHERE origin_queue <> '')) AS origins,
       list_sort(list(DISTINCT broker) FILTER (WHERE broker <> '')) AS brokers,
       list_sort(list(DISTINCT consumer) FILTER (WHERE consumer <> '')) AS consumers,
       list_sort(list(DISTINCT host) FILTER (WHERE host <> '')) AS hosts
FROM letters GROUP BY fingerprint
"""
DUCKDB_DAYS = "SELECT fingerprint, CAST(seen_at AS DATE) AS day, count(*) FROM letters GROUP BY 1, 2"
DUCKDB_LETTERS = """
CREATE OR REPLACE VIEW letters AS
SELECT id, fingerprint, exception_type, exception_message, reason, origin_queue, broker, consumer, host,
       coalesce(last_failed_at, captured_at) AS seen_at
FROM read_parquet('{path}/letters/*/*/*/*.parquet', hive_partitioning = true)
"""


def generate(spark, letters: int, lake: Path) -> None:
    """``letters`` synthetic letters in the lake's layout: GROUPS fingerprints over DAYS days,
    2 brokers x 4 places, framework consumer/host on half of them."""
    from pyspark.sql import functions as F

    group = (F.col("id") * F.lit(2654435761)) % GROUPS
    seen = F.timestamp_seconds(F.lit(1_780_000_000) + (F.col("id") * 86400 * DAYS / letters).cast("long"))
    frame = spark.range(letters).select(
        "id",
        F.lpad(F.hex(group), 16, "0").alias("fingerprint"),
        F.concat(F.lit("com.example.Error"), (group % 50).cast("string")).alias("exception_type"),
        F.concat(F.lit("order ORD-"), F.col("id").cast("string"), F.lit(" failed after "),
                 (F.col("id") % 60).cast("string"), F.lit("s")).alias("exception_message"),
        F.when(group % 7 == 0, "expired").otherwise("rejected").alias("reason"),
        F.concat(F.lit("service-"), (group % 20).cast("string")).alias("origin_queue"),
        F.when(F.col("id") % 2 == 0, F.concat(F.lit("Consumer"), (group % 30).cast("string"))).alias("consumer"),
        F.when(F.col("id") % 2 == 0, F.concat(F.lit("web-"), (F.col("id") % 8).cast("string"))).alias("host"),
        seen.alias("last_failed_at"),
        seen.alias("captured_at"),
        F.to_date(seen).alias("day"),
        F.concat(F.lit("broker-"), (group % 2).cast("string")).alias("broker"),
        (group % 4 + 1).alias("place"),
    )
    frame.repartition("day", "broker", "place").write.mode("overwrite").partitionBy("day", "broker", "place") \
        .parquet(str(lake / "letters"))


def time_spark(spark, lake: Path) -> tuple[float, dict, list]:
    """The pipeline's own computation, as ``run_groups`` does it up to storing the result."""
    from console.pipeline.groups import archived_letters, compute_groups

    started = time.perf_counter()
    groups, days = compute_groups(archived_letters(spark, str(lake)))
    elapsed = time.perf_counter() - started
    return elapsed, {g.fingerprint: (g.count, g.exception_type, g.sample_message, g.reason, g.origins, g.brokers,
                                     g.consumers, g.hosts) for g in groups}, \
        sorted((d.fingerprint, d.day, d.count) for d in days)


def time_duckdb(lake: Path) -> tuple[float, dict, list]:
    import duckdb

    connection = duckdb.connect()
    started = time.perf_counter()
    connection.execute(DUCKDB_LETTERS.format(path=lake))
    group_rows = connection.execute(DUCKDB_GROUPS).fetchall()
    day_rows = connection.execute(DUCKDB_DAYS).fetchall()
    elapsed = time.perf_counter() - started
    connection.close()
    # DuckDB gives NULL for a name list with nothing in it, Spark an empty list.
    return elapsed, {row[0]: (row[1], *row[4:8], *(names or [] for names in row[8:])) for row in group_rows}, \
        sorted(day_rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--dir", default=str(ROOT / "var" / "bench" / "pipeline"))
    parser.add_argument("--driver-memory", default="8g")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each engine per size; the best is shown")
    args = parser.parse_args()

    import django

    django.setup()
    os.environ.setdefault("DLO_SPARK_DRIVER_MEMORY", args.driver_memory)
    os.environ.setdefault("DLO_SPARK_LOG_LEVEL", "ERROR")
    from console.pipeline.session import get_spark

    spark = get_spark("dlo-benchmark")
    base = Path(args.dir)
    shutil.rmtree(base, ignore_errors=True)
    lakes = {}
    for size in sorted(args.sizes):
        lakes[size] = base / f"lake-{size}"
        started = time.perf_counter()
        generate(spark, size, lakes[size])
        print(f"generated {size:>12,} letters in {time.perf_counter() - started:6.1f} s", flush=True)

    time_spark(spark, lakes[min(lakes)])  # warm-up
    results = {}
    print(f"best of {args.repeat} runs each")
    print(f"{'letters':>12} {'spark s':>9} {'duckdb s':>9} {'spark/duckdb':>13} {'groups':>7}")
    for size, lake in lakes.items():
        spark_times, duck_times = [], []
        for _ in range(args.repeat):  # in turn, so both engines see the same load
            spark_s, spark_groups, spark_days = time_spark(spark, lake)
            duck_s, duck_groups, duck_days = time_duckdb(lake)
            assert (spark_groups, spark_days) == (duck_groups, duck_days), "results differ"
            assert sum(group[0] for group in spark_groups.values()) == size, "letters missing"
            spark_times.append(spark_s)
            duck_times.append(duck_s)
        spark_s, duck_s = min(spark_times), min(duck_times)
        results[size] = spark_s
        print(f"{size:>12,} {spark_s:>9.2f} {duck_s:>9.2f} {spark_s / duck_s:>13.2f} {len(spark_groups):>7}", flush=True)
    sizes = sorted(results)
    for small, large in zip(sizes, sizes[1:]):
        print(f"scaling {small:,} -> {large:,} letters ({large / small:.0f}x): "
              f"time x{results[large] / results[small]:.2f}")
    spark.stop()


if __name__ == "__main__":
    main()
