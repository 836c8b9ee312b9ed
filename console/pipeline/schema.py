"""The lake's datasets: their columns and partitions. These schemas are the contract: every
writer selects exactly these columns, every reader reads with them.

    letters/day=YYYY-MM-DD/broker=<name>/place=<id>/   one row per letter, as archived
    bodies/prefix=<2 hex>/                              one row per distinct body (sha256)
    jobs/day=.../broker=.../place=.../                  finished jobs and their counters
    audit/day=.../broker=.../place=.../                 the audit chain, event by event

``day`` is the UTC day the row came to be (captured, created, recorded); ``broker`` is the
broker's name and ``place`` the dead place's id (both null when a job or event has none).
Bodies are kept once per content: a letter names its body by ``body_sha256`` (null once erased).
"""

from __future__ import annotations

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    BooleanType,
    DateType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

LETTERS = "letters"
BODIES = "bodies"
JOBS = "jobs"
AUDIT = "audit"

PARTITIONS = ["day", "broker", "place"]
_PARTITION_FIELDS = [
    StructField("day", DateType()),
    StructField("broker", StringType()),
    StructField("place", LongType()),
]


def _fields(spec: str) -> list[StructField]:
    """``"id:long, name:string"`` -> fields; keeps the column lists below readable."""
    types = {"long": LongType(), "int": IntegerType(), "string": StringType(), "ts": TimestampType(),
             "bool": BooleanType(), "binary": BinaryType(), "longs": ArrayType(LongType())}
    fields = []
    for item in spec.split(","):
        name, kind = item.strip().split(":")
        fields.append(StructField(name, types[kind]))
    return fields


LETTER_FIELDS = _fields(
    "id:long, broker_id:long, place_name:string, place_scope:string, state:string, state_changed_at:ts,"
    "message_id:string, captured_at:ts, origin_address:string, origin_queue:string, routing_key:string,"
    "reason:string, death_count:int, first_failed_at:ts, last_failed_at:ts, exception_type:string,"
    "exception_message:string, exception_stack:string, fingerprint:string, consumer:string, host:string,"
    "envelope_details:string, headers:string, properties:string, body_sha256:string, body_size:long,"
    "body_erased:bool, replay_id:string, replayed_at:ts, parent_id:long, last_job_id:long"
)
BODY_FIELDS = _fields("sha256:string, body:binary, size:long")
JOB_FIELDS = _fields(
    "id:long, kind:string, status:string, actor_name:string, reason:string, ticket:string, target:string,"
    "selection:string, expected:long, total:long, done:long, failed:long, skipped:long, returned:long,"
    "rate_limit:long, error:string, created_at:ts, started_at:ts, finished_at:ts"
)
AUDIT_FIELDS = _fields(
    "id:long, at:ts, actor_name:string, action:string, reason:string, ticket:string, job_id:long,"
    "broker_name:string, place_name:string, target:string, letter_ids:longs, count:long, outcome:string,"
    "details:string, source_ip:string, prev_hash:string, hash:string"
)

SCHEMAS = {
    LETTERS: StructType(LETTER_FIELDS + _PARTITION_FIELDS),
    BODIES: StructType(BODY_FIELDS + [StructField("prefix", StringType())]),
    JOBS: StructType(JOB_FIELDS + _PARTITION_FIELDS),
    AUDIT: StructType(AUDIT_FIELDS + _PARTITION_FIELDS),
}
PARTITIONED_BY = {LETTERS: PARTITIONS, BODIES: ["prefix"], JOBS: PARTITIONS, AUDIT: PARTITIONS}


def columns(dataset: str) -> list[str]:
    """Every column of a dataset, partitions last: what a writer selects."""
    return SCHEMAS[dataset].fieldNames()


def body_prefix(sha256: str) -> str:
    """The bodies partition a hash lives in."""
    return sha256[:2]
