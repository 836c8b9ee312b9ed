"""Reading custody from PostgreSQL for the lake, in keyset batches on the driver.

Rows are fetched through Django's own connection (so the reads see what the current
transaction sees) and handed to ``spark.createDataFrame`` with the lake's explicit schema:
no pandas, no Arrow, no inference. That suits incremental runs of ``local[*]`` and a
cluster's driver alike, since each run moves only the rows above the watermark. For a first
export of a very large custody on a cluster, Spark's JDBC source with ``partitionColumn=id``
(and the PostgreSQL JDBC driver on the classpath, Debian's ``libpostgresql-jdbc-java``) reads
the same queries in parallel on the executors.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from django.db import connection

from console.models import Job

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.types import StructType

LETTERS_SQL = """
SELECT l.id, l.broker_id, p.name, p.scope, l.state, l.state_changed_at, l.message_id, l.captured_at,
       l.origin_address, l.origin_queue, l.routing_key, l.reason, l.death_count, l.first_failed_at,
       l.last_failed_at, l.exception_type, l.exception_message, l.exception_stack, l.fingerprint,
       NULLIF(l.envelope_details->>'consumer', ''), NULLIF(l.envelope_details->>'host', ''),
       l.envelope_details::text, l.headers::text, l.properties::text,
       CASE WHEN l.body_erased THEN NULL ELSE encode(sha256(l.body), 'hex') END,
       l.body_size, l.body_erased, l.replay_id, l.replayed_at, l.parent_id, l.last_job_id,
       (l.captured_at AT TIME ZONE 'UTC')::date, b.name, l.place_id,
       CASE WHEN l.body_erased THEN NULL ELSE l.body END
FROM console_deadletter l
JOIN console_deadplace p ON p.id = l.place_id
JOIN console_broker b ON b.id = l.broker_id
WHERE l.id > %s
ORDER BY l.id LIMIT %s
"""

#: The finished statuses as an SQL list, from the one place that names them (Job.FINISHED).
_FINISHED = ", ".join(f"'{status}'" for status in Job.FINISHED)

# Only finished jobs, and only below the oldest unfinished one: a job's outcome is archived once
# it is final, and the watermark never passes a job that may still change.
JOBS_SQL = f"""
SELECT j.id, j.kind, j.status, j.actor_name, j.reason, j.ticket, COALESCE(j.params->>'target', ''),
       j.selection::text, j.expected, j.total, j.done, j.failed, j.skipped, j.returned,
       (j.params->>'rate_limit')::int, j.error, j.created_at, j.started_at, j.finished_at,
       (j.created_at AT TIME ZONE 'UTC')::date, b.name, j.place_id
FROM console_job j
LEFT JOIN console_deadplace p ON p.id = j.place_id
LEFT JOIN console_broker b ON b.id = p.broker_id
WHERE j.id > %s AND j.status IN ({_FINISHED})
  AND j.id < COALESCE((SELECT min(id) FROM console_job WHERE status NOT IN ({_FINISHED})),
                      9223372036854775807)
ORDER BY j.id LIMIT %s
"""

# Events name their place by broker and place name; the place id (for the partition) is looked up.
AUDIT_SQL = """
SELECT a.id, a.at, a.actor_name, a.action, a.reason, a.ticket, a.job_id, a.broker_name, a.place_name,
       a.target, a.letter_ids, a.count, a.outcome, a.details::text, host(a.source_ip), a.prev_hash, a.hash,
       (a.at AT TIME ZONE 'UTC')::date, NULLIF(a.broker_name, ''), place.id
FROM console_auditevent a
LEFT JOIN LATERAL (
    SELECT min(p.id) AS id FROM console_deadplace p JOIN console_broker b ON b.id = p.broker_id
    WHERE a.place_name <> '' AND b.name = a.broker_name AND p.name = a.place_name
) place ON true
WHERE a.id > %s
ORDER BY a.id LIMIT %s
"""

# What groups needs of the letters not yet in the lake; the last column is the day the letter's
# lake partition will have, as in LETTERS_SQL.
GROUP_COLUMNS_SQL = """
SELECT l.id, l.fingerprint, l.exception_type, l.exception_message, l.reason, l.origin_queue, b.name,
       NULLIF(l.envelope_details->>'consumer', ''), NULLIF(l.envelope_details->>'host', ''),
       COALESCE(l.last_failed_at, l.captured_at), (l.captured_at AT TIME ZONE 'UTC')::date
FROM console_deadletter l JOIN console_broker b ON b.id = l.broker_id
WHERE l.id > %s
ORDER BY l.id LIMIT %s
"""


def keyset(sql: str, *, after: int, batch: int = 2000, limit: int | None = None) -> Iterator[list[tuple]]:
    """Batches of rows whose first column is an increasing id, starting after ``after``.

    Stops after ``limit`` rows when given (the caller writes them, then asks again).
    """
    fetched = 0
    while limit is None or fetched < limit:
        size = batch if limit is None else min(batch, limit - fetched)
        with connection.cursor() as cursor:
            cursor.execute(sql, [after, size])
            rows = [tuple(bytes(v) if isinstance(v, memoryview) else v for v in row) for row in cursor.fetchall()]
        if not rows:
            return
        yield rows
        fetched += len(rows)
        after = int(rows[-1][0])  # the last id
        if len(rows) < size:
            return


def custody_frame(spark: SparkSession, sql: str, after: int, schema: StructType) -> DataFrame:
    """The rows of ``sql`` above ``after`` (keyset batches) as a DataFrame of ``schema``."""
    rows = [row for batch in keyset(sql, after=after, batch=5000) for row in batch]
    return spark.createDataFrame(rows, schema)


# What analytics needs of the letters not yet in the lake (see console.pipeline.analytics).
ANALYTICS_LETTERS_SQL = """
SELECT l.id, l.fingerprint, l.origin_queue, b.name, NULLIF(l.envelope_details->>'consumer', ''),
       NULLIF(l.envelope_details->>'host', ''), COALESCE(l.first_failed_at, l.captured_at), l.captured_at, l.parent_id,
       l.place_id
FROM console_deadletter l JOIN console_broker b ON b.id = l.broker_id
WHERE l.id > %s
ORDER BY l.id LIMIT %s
"""

