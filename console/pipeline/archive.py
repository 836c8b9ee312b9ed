"""archive: copy letters, finished jobs and audit events from PostgreSQL into the lake.

Incremental: each dataset starts after its watermark (the highest id already written, kept in
``LakeWatermark``) and moves in chunks, each chunk written and then its watermark advanced.
Idempotent: before a chunk is appended, the ids it holds are looked up in the partitions it
touches (day pruning makes that cheap) and those already there are left out, so a run that
died between writing and advancing the watermark, or two runs at once, add no duplicates.
Bodies go to their own dataset once per content hash, before the letters that name them.

A letter is archived as it is at that moment; what happens to it later (replayed, purged) is
in the audit events, which are archived too.
"""

from __future__ import annotations

from django.db import models, transaction
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

from console.models import LakeWatermark
from console.pipeline import lake as lakefs
from console.pipeline.schema import (
    AUDIT,
    BODIES,
    JOBS,
    LETTER_FIELDS,
    LETTERS,
    PARTITIONED_BY,
    SCHEMAS,
    body_prefix,
    columns,
)
from console.pipeline.session import get_spark
from console.pipeline.source import AUDIT_SQL, JOBS_SQL, LETTERS_SQL, keyset

CHUNK_ROWS = 20_000
SOURCES = {LETTERS: LETTERS_SQL, JOBS: JOBS_SQL, AUDIT: AUDIT_SQL}
_SHA = [f.name for f in LETTER_FIELDS].index("body_sha256")


def watermark(lake: str, dataset: str) -> int:
    """The highest id of ``dataset`` already in ``lake`` (0 before the first archive)."""
    return LakeWatermark.objects.filter(lake=lake, dataset=dataset).values_list("last_id", flat=True).first() or 0


def _advance(lake: str, dataset: str, last_id: int, added: int) -> None:
    with transaction.atomic():
        mark, _ = LakeWatermark.objects.select_for_update().get_or_create(lake=lake, dataset=dataset)
        LakeWatermark.objects.filter(pk=mark.pk).update(last_id=max(mark.last_id, last_id),
                                                        rows=models.F("rows") + added)


def archive(lake: str | None = None, *, spark: SparkSession | None = None, chunk_rows: int = CHUNK_ROWS) -> dict:
    """Archive every dataset; returns the rows added per dataset."""
    spark = spark or get_spark()
    lake = lakefs.lake_url(lake)
    return {dataset: _export(spark, lake, dataset, chunk_rows) for dataset in (LETTERS, JOBS, AUDIT)}


def _export(spark: SparkSession, lake: str, dataset: str, chunk_rows: int) -> int:
    added = 0
    while True:
        rows = [row for batch in keyset(SOURCES[dataset], after=watermark(lake, dataset), limit=chunk_rows)
                for row in batch]
        if not rows:
            return added
        last_id, complete = rows[-1][0], len(rows) < chunk_rows
        known = _ids_in_lake(spark, lake, dataset, rows)
        rows = [row for row in rows if row[0] not in known]
        if dataset == LETTERS:
            _write_bodies(spark, lake, {row[_SHA]: row[-1] for row in rows if row[_SHA] is not None})
            rows = [row[:-1] for row in rows]
        if rows:
            chunk = spark.createDataFrame(rows, SCHEMAS[dataset]).select(*columns(dataset))
            chunk.repartition(*PARTITIONED_BY[dataset]).write.mode("append").partitionBy(
                *PARTITIONED_BY[dataset]).parquet(lakefs.dataset_path(lake, dataset))
        _advance(lake, dataset, last_id, len(rows))
        added += len(rows)
        if complete:
            return added


def _ids_in_lake(spark: SparkSession, lake: str, dataset: str, rows: list[tuple]) -> set[int]:
    """Ids of this chunk already in the lake, read from the day partitions the chunk touches."""
    if not lakefs.exists(spark, lakefs.dataset_path(lake, dataset)):
        return set()
    day = len(SCHEMAS[dataset].fieldNames()) - 3
    days = sorted({row[day] for row in rows})
    existing = (lakefs.read(spark, lake, dataset, SCHEMAS[dataset])
                .where(F.col("day").isin(days))
                .where(F.col("id").between(rows[0][0], rows[-1][0])))
    return {row.id for row in existing.select("id").collect()}


def _write_bodies(spark: SparkSession, lake: str, bodies: dict[str, bytes]) -> int:
    """Append the bodies whose hash the lake does not hold yet; returns how many."""
    path = lakefs.dataset_path(lake, BODIES)
    if bodies and lakefs.exists(spark, path):
        known = (lakefs.read(spark, lake, BODIES, SCHEMAS[BODIES])
                 .where(F.col("prefix").isin(sorted({body_prefix(sha) for sha in bodies})))
                 .where(F.col("sha256").isin(list(bodies))).select("sha256").collect())
        for row in known:
            bodies.pop(row.sha256, None)
    if not bodies:
        return 0
    rows = [(sha, body, len(body), body_prefix(sha)) for sha, body in bodies.items()]
    frame = spark.createDataFrame(rows, SCHEMAS[BODIES]).select(*columns(BODIES))
    frame.repartition("prefix").write.mode("append").partitionBy("prefix").parquet(path)
    return len(rows)
