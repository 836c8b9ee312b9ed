"""retention: the rule of seed 001 on our failure records, and erasing old bodies.

In the seed, a consumer's failure logs go when its last activation succeeded, and otherwise
those older than N days before that activation. In our domain:

* a **consumer** is an origin subscription on a broker (``broker``, ``origin_queue``);
* an **activation** of it is a replay job (``replay`` or ``archive_replay``) that published
  letters back to it, as its confirmed audit rows name it (their ``target``); the **last**
  one is the most recently finished such job;
* it **succeeded** when the job ended ``succeeded`` with nothing refused (``failed`` 0) and
  nothing came back dead (``returned`` 0);
* its **failure records** are its letters in custody that are resolved (replayed, failed or
  purged: never a letter still held, which is a message, not a record) and already archived
  (the lake keeps the history);
* succeeded: every record captured before the activation ended is deleted; otherwise (a failed,
  cancelled or half-refused activation) those captured more than N days before it ended; a
  consumer never activated loses those captured more than N days ago.

Bodies: letters resolved more than N days ago lose their body in custody (the tombstone stays),
and their bodies leave the lake unless another letter still needs the same content. A letter
deleted from custody counts as resolved no later than its deletion.

Every deletion is audited: custody deletions and erasures in their own transaction, one
event per chunk; the lake's erasure with its count once the new files are in place.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import LongType, StringType, StructField, StructType

from console.models import AuditEvent, Broker, DeadLetter, Job, LetterState
from console.pipeline import lake as lakefs
from console.pipeline.archive import watermark
from console.pipeline.outcomes import Replays
from console.pipeline.schema import BODIES, LETTERS, SCHEMAS, columns
from console.pipeline.session import get_spark
from console.services import audit

ACTOR = "pipeline:retention"
RESOLVED = (LetterState.REPLAYED, LetterState.FAILED, LetterState.PURGED)
CHUNK = 2000
# Where a rewrite of the bodies stages what it keeps (inside the lake, beside the datasets).
STAGING = "_staging/bodies"


@dataclass
class Activation:
    job_id: int
    finished_at: datetime
    succeeded: bool


@dataclass
class RetentionReport:
    deleted: int = 0
    erased_in_custody: int = 0
    erased_in_lake: int = 0
    by_consumer: dict[str, int] = field(default_factory=dict)


def last_activations(replays: Replays) -> dict[tuple[str, str], Activation]:
    """(broker name, origin queue) -> the last finished replay job that published to it."""
    jobs = {job.pk: job for job in Job.objects.filter(kind__in=replays.kinds, status__in=Job.FINISHED,
                                                     finished_at__isnull=False)}
    latest: dict[tuple[str, str], Activation] = {}
    rows = AuditEvent.objects.filter(action__in=replays.actions, outcome="confirmed", job_id__in=list(jobs))
    for broker_name, target, job_id in rows.values_list("broker_name", "target", "job_id").distinct():
        job = jobs[job_id] if job_id is not None else None
        if job is None or job.finished_at is None:  # neither: the query asks for finished jobs' events
            continue
        ok = job.status == Job.Status.SUCCEEDED and job.failed == 0 and job.returned == 0
        for origin in target.split(", "):
            key = (broker_name, origin)
            if key not in latest or latest[key].finished_at < job.finished_at:
                latest[key] = Activation(job.pk, job.finished_at, ok)
    return latest


def records_to_delete(lake: str, days: int, now: datetime, replays: Replays
                      ) -> dict[tuple[str, str], tuple[str, list[int]]]:
    """Per consumer: the rule that applies and the ids of the records it deletes."""
    archived_up_to = watermark(lake, LETTERS)
    activations = last_activations(replays)
    records = (DeadLetter.objects.filter(state__in=RESOLVED, id__lte=archived_up_to)
               .values_list("id", "broker__name", "origin_queue", "captured_at").order_by("id"))
    chosen: dict[tuple[str, str], tuple[str, list[int]]] = {}
    for letter_id, broker_name, origin, captured_at in records.iterator(chunk_size=CHUNK):
        activation = activations.get((broker_name, origin))
        if activation is None:
            rule, cutoff = "no activation: older than N days", now - timedelta(days=days)
            keep = captured_at >= cutoff
        elif activation.succeeded:
            rule, keep = f"last activation (job {activation.job_id}) succeeded", captured_at > activation.finished_at
        else:
            rule = f"last activation (job {activation.job_id}) failed: older than N days before it"
            keep = captured_at >= activation.finished_at - timedelta(days=days)
        if not keep:
            chosen.setdefault((broker_name, origin), (rule, []))[1].append(letter_id)
    return chosen


def run_retention(lake: str | None = None, *, replays: Replays, days: int | None = None,
                  spark: SparkSession | None = None, now: datetime | None = None) -> RetentionReport:
    """Apply the rule to custody, then erase old bodies in custody and in the lake."""
    lake = lakefs.lake_url(lake)
    days = settings.DLO_RETENTION_DAYS if days is None else days
    now = now or timezone.now()
    report = RetentionReport()
    long_resolved = _resolved_long_ago(days, now)  # before the deletions, which hide resolution times
    brokers = {broker.name: broker for broker in Broker.objects.all()}
    for (broker_name, origin), (rule, ids) in records_to_delete(lake, days, now, replays).items():
        for start in range(0, len(ids), CHUNK):
            chunk = ids[start:start + CHUNK]
            with transaction.atomic():
                # delete() also counts the rows that go with a letter (LetterSearch); only letters count here.
                _, by_model = DeadLetter.objects.filter(id__in=chunk, state__in=RESOLVED).delete()
                deleted = by_model.get(DeadLetter._meta.label, 0)
                audit.record("retention.delete", actor=ACTOR, broker=brokers.get(broker_name), target=origin,
                             letter_ids=chunk, count=deleted, outcome="deleted",
                             reason=f"retention: {rule}", details={"days": days, "origin": origin})
            report.deleted += deleted
            consumer = f"{broker_name}:{origin}"
            report.by_consumer[consumer] = report.by_consumer.get(consumer, 0) + deleted
    report.erased_in_custody = erase_custody_bodies(days, now)
    report.erased_in_lake = erase_lake_bodies(spark or get_spark(), lake, long_resolved, days)
    return report


def erase_custody_bodies(days: int, now: datetime) -> int:
    """Letters resolved more than ``days`` ago lose their body; the tombstone stays."""
    old = DeadLetter.objects.filter(state__in=RESOLVED, body_erased=False,
                                    state_changed_at__lt=now - timedelta(days=days)).order_by("id")
    erased = 0
    while ids := list(old.values_list("id", flat=True)[:CHUNK]):
        with transaction.atomic():
            count = DeadLetter.objects.filter(id__in=ids, body_erased=False).update(body=b"", body_erased=True)
            audit.record("retention.erase_body", actor=ACTOR, letter_ids=ids, count=count, outcome="erased",
                         reason=f"retention: resolved more than {days} days ago", details={"days": days})
        erased += count
    return erased


def _resolved_long_ago(days: int, now: datetime) -> list[int]:
    """Letter ids whose bodies may go: resolved in custody before the cutoff, or deleted from
    custody by retention before it (a deleted letter was resolved no later than that)."""
    cutoff = now - timedelta(days=days)
    ids = set(DeadLetter.objects.filter(state__in=RESOLVED, state_changed_at__lt=cutoff)
              .values_list("id", flat=True))
    for letter_ids in AuditEvent.objects.filter(action="retention.delete", at__lt=cutoff).values_list(
            "letter_ids", flat=True):
        ids.update(letter_ids)
    return sorted(ids)


def erase_lake_bodies(spark: SparkSession, lake: str, long_resolved: list[int], days: int) -> int:
    """Rewrite the bodies partitions that hold bodies only ``long_resolved`` letters name."""
    if not lakefs.exists(spark, lakefs.dataset_path(lake, BODIES)):
        return 0
    gone = spark.createDataFrame([(i,) for i in long_resolved],
                                 StructType([StructField("id", LongType())]))
    letters = lakefs.read(spark, lake, LETTERS, SCHEMAS[LETTERS]).where(F.col("body_sha256").isNotNull())
    candidates = letters.join(gone, on="id", how="left_semi").select("body_sha256").distinct()
    still_needed = letters.join(gone, on="id", how="left_anti").select("body_sha256")
    custody_needed = spark.createDataFrame(
        [(sha,) for sha in _unarchived_hashes(watermark(lake, LETTERS))],
        StructType([StructField("body_sha256", StringType())]))
    doomed = (candidates.join(still_needed.unionByName(custody_needed), on="body_sha256", how="left_anti")
              .select(F.col("body_sha256").alias("sha256"), F.substring("body_sha256", 1, 2).alias("prefix")))
    bodies = lakefs.read(spark, lake, BODIES, SCHEMAS[BODIES])
    erase = bodies.join(doomed, on=["sha256", "prefix"], how="left_semi").select("sha256", "prefix").collect()
    if not erase:
        return 0
    _rewrite_without(spark, lake, {row.sha256 for row in erase}, sorted({row.prefix for row in erase}))
    with transaction.atomic():
        audit.record("retention.lake_bodies", actor=ACTOR, count=len(erase), outcome="erased",
                     reason=f"retention: bodies of letters resolved more than {days} days ago",
                     details={"lake": lake, "partitions": len({row.prefix for row in erase}), "days": days})
    return len(erase)


def _unarchived_hashes(after: int) -> list[str]:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT DISTINCT encode(sha256(body), 'hex') FROM console_deadletter "
                       "WHERE id > %s AND NOT body_erased", [after])
        return [row[0] for row in cursor.fetchall()]


def _rewrite_without(spark: SparkSession, lake: str, hashes: set[str], prefixes: list[str]) -> None:
    """Write the affected partitions again without ``hashes``.

    What stays is written to a staging folder first (a query cannot overwrite what it reads);
    then each partition is overwritten from there, an emptied one with no rows, and the staging
    copy is emptied. Only writes, so the same steps run through Spark Connect. Overwriting a
    partition clears it before writing it: should a run die in between, that partition's kept
    bodies are still in the staging folder (``_staging/bodies``), which the next rewrite replaces.
    """
    root = lakefs.dataset_path(lake, BODIES)
    staging = lakefs.dataset_path(lake, STAGING)
    doomed = spark.createDataFrame([(sha,) for sha in hashes], StructType([StructField("sha256", StringType())]))
    kept = (lakefs.read(spark, lake, BODIES, SCHEMAS[BODIES]).where(F.col("prefix").isin(prefixes))
            .join(doomed, on="sha256", how="left_anti").select(*columns(BODIES)))
    # Static: the whole staging folder is replaced, so no partition of an earlier run survives in it.
    kept.write.mode("overwrite").option("partitionOverwriteMode", "static").partitionBy("prefix").parquet(staging)
    data = [name for name in columns(BODIES) if name != "prefix"]
    staged = lakefs.read(spark, lake, STAGING, SCHEMAS[BODIES])
    for prefix in prefixes:
        staged.where(F.col("prefix") == prefix).select(*data).write.mode("overwrite").parquet(f"{root}/prefix={prefix}")
    spark.createDataFrame([], SCHEMAS[BODIES]).write.mode("overwrite").option(
        "partitionOverwriteMode", "static").partitionBy("prefix").parquet(staging)
