"""What a replay's two state changes cost PostgreSQL per letter, for the letters table as it is
and for two other shapes of it, measured in the same run.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/dlo_bench .venv/bin/python benchmarks/letter_updates.py

``--letters N`` (default 100,000). The place ``orders.dlq`` is seeded as for benchmarks/pages.py
(skipped when it holds N letters already). Its letters are copied into three scratch tables:

- ``current``: ``LIKE console_deadletter INCLUDING ALL``, the same columns and indexes, the
  same rows (the baseline);
- ``narrow``: the same indexes, with body, headers, properties, stack and envelope details
  emptied: what a state row split from the letter's content would write;
- ``hot``: the same rows with only the primary key indexed and pages 70 % full, so that an
  update that changes no indexed column stays on its page (a HOT update, no index entries).

On each, batch by batch (``--batch``, default 1000) as console.jobs.engines.publish does, the mark
(``replaying``, a job, a replay id) and the record (``replayed``), each in its own transaction.
Prints seconds, microseconds and WAL bytes per letter, the share of HOT updates, and the time
against ``current``. The scratch tables are dropped at the end; the console's own tables are
only read.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import seeded_place, setup_django, vacuum_analyze  # noqa: E402

SHAPES = {
    "current": ("INCLUDING ALL", "", None),
    "narrow": ("INCLUDING ALL", "body = '', headers = '{}', properties = '{}', exception_stack = '', "
                                "envelope_details = '{}'", None),
    "hot": ("INCLUDING DEFAULTS", "", 70),
}
MARK = ("UPDATE {table} SET state = 'replaying', last_job_id = NULL, state_changed_at = now(), "
        "replay_id = CASE WHEN replay_id = '' THEN md5(id::text) ELSE replay_id END WHERE id = ANY(%s)")
RECORD = "UPDATE {table} SET state = 'replayed', replayed_at = now(), state_changed_at = now() WHERE id = ANY(%s)"


def build(cursor, table: str, place_id: int, like: str, emptied: str, fillfactor: int | None) -> None:
    cursor.execute(f"DROP TABLE IF EXISTS {table}")
    cursor.execute(f"CREATE TABLE {table} (LIKE console_deadletter {like})")
    if fillfactor:
        cursor.execute(f"ALTER TABLE {table} SET (fillfactor = {fillfactor})")
        cursor.execute(f"ALTER TABLE {table} ADD PRIMARY KEY (id)")
    cursor.execute(f"INSERT INTO {table} SELECT * FROM console_deadletter WHERE place_id = %s", [place_id])
    if emptied:
        cursor.execute(f"UPDATE {table} SET {emptied}")
        cursor.execute(f"VACUUM FULL {table}")
    cursor.execute(f"VACUUM ANALYZE {table}")


def measure(cursor, table: str, ids: list[int], batch: int) -> tuple[float, float, float]:
    """(seconds, WAL bytes, share of HOT updates) for marking and recording every letter."""
    from django.db import transaction

    cursor.execute("SELECT pg_current_wal_lsn()")
    (start_lsn,) = cursor.fetchone()
    started = time.perf_counter()
    for at in range(0, len(ids), batch):
        chunk = ids[at:at + batch]
        for statement in (MARK, RECORD):
            with transaction.atomic():
                cursor.execute(statement.format(table=table), [chunk])
    seconds = time.perf_counter() - started
    cursor.execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), %s)", [start_lsn])
    (wal,) = cursor.fetchone()
    cursor.execute("SELECT pg_stat_force_next_flush()")
    time.sleep(0.6)  # the statistics collector's report of this backend
    cursor.execute("SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = %s", [table])
    updated, hot = cursor.fetchone()
    return seconds, float(wal), hot / updated if updated else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--letters", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=1000)
    args = parser.parse_args()
    setup_django()

    from django.db import connection

    from console.models import DeadLetter

    place = seeded_place("orders.dlq", args.letters, samples=False)
    vacuum_analyze()
    ids = list(DeadLetter.objects.filter(place=place).order_by("id").values_list("id", flat=True))
    print(f"{len(ids):,} letters, batches of {args.batch:,}: mark replaying, then record replayed\n")
    print(f"{'shape':>8} {'seconds':>8} {'µs/letter':>10} {'WAL B/letter':>13} {'HOT':>5} {'vs current':>11}")
    baseline = None
    with connection.cursor() as cursor:
        try:
            for shape, (like, emptied, fillfactor) in SHAPES.items():
                table = f"probe_letters_{shape}"
                build(cursor, table, place.pk, like, emptied, fillfactor)
                seconds, wal, hot = measure(cursor, table, ids, args.batch)
                baseline = baseline or seconds
                print(f"{shape:>8} {seconds:8.2f} {seconds / len(ids) * 1e6:10.1f} {wal / len(ids):13,.0f} "
                      f"{hot:5.0%} {seconds / baseline:10.2f}x", flush=True)
        finally:
            for shape in SHAPES:
                cursor.execute(f"DROP TABLE IF EXISTS probe_letters_{shape}")


if __name__ == "__main__":
    main()
