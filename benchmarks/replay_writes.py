"""What a replay's writes cost PostgreSQL per letter on the letters table as it is (its
indexes and triggers), in a database that holds a million letters: the way before issue 32
(the mark, an update to ``replaying``, then the record, an update to ``replayed``) against
today's (the take: a row lock and a narrow LetterFlight row; the record: one update to
``replayed``, the flight deleted), in alternating blocks in the same run.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/dlo_bench32 .venv/bin/python benchmarks/replay_writes.py

``--letters N`` (default 1,000,000) are seeded as for benchmarks/pages.py when the database
holds fewer (skipped otherwise; benchmarks/api_vs_shovel.py --held seeds the same). Blocks of
``--block`` letters (20,000) of one place are replayed by each way in turn, ``--pairs`` times
(3), in batches of ``--batch`` (1,000, DLO_BATCH_SIZE's default), each step in its own
transaction as console.jobs.engines.publish runs them; nothing is published. After each block
its letters are put back (held, no replay id) and the table vacuumed, untimed. Prints the
seconds of each block, µs and WAL bytes per letter, and the ratio of the medians.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import seeded_place, setup_django, vacuum_analyze  # noqa: E402

#: Before issue 32 (console/jobs/engines/publish.py at 78f0821).
MARK_BEFORE = """
    UPDATE console_deadletter AS letter
       SET state = 'replaying', last_job_id = %(job)s, state_changed_at = now(),
           replay_id = CASE WHEN letter.replay_id = '' THEN fresh.replay_id ELSE letter.replay_id END
      FROM unnest(%(ids)s::bigint[], %(replay_ids)s::text[]) AS fresh(id, replay_id)
     WHERE letter.id = fresh.id
       AND (letter.state = 'held' OR (letter.state = 'replaying' AND letter.last_job_id = %(job)s))
 RETURNING letter.id, letter.place_id, letter.broker_id, letter.origin_queue, letter.replay_id, letter.headers,
           letter.properties, letter.body
"""
RECORD_BEFORE = """
    UPDATE console_deadletter
       SET state = 'replayed', replayed_at = now(), state_changed_at = now(),
           replayed_to = COALESCE(NULLIF(%(target)s, ''), origin_queue)
     WHERE id = ANY(%(ids)s::bigint[])
"""
RESET = """
    UPDATE console_deadletter SET state = 'held', replay_id = '', replayed_to = '', replayed_at = NULL,
                                  last_job_id = NULL
     WHERE id = ANY(%(ids)s::bigint[])
"""
JOB = -32  # no job row is needed: nothing refers to one by a constraint


def run_block(cursor, ids: list[int], batch: int, way: str) -> tuple[float, float]:
    """(seconds, WAL bytes) to take and record ``ids`` in batches, one way."""
    from django.db import transaction

    from console.jobs.engines.publish import _RECORD_SQL, _TAKE_SQL, array_text
    from console.services.custody import replay_id

    cursor.execute("SELECT pg_current_wal_lsn()")
    (start_lsn,) = cursor.fetchone()
    started = time.perf_counter()
    for at in range(0, len(ids), batch):
        chunk = ids[at:at + batch]
        params = {"job": JOB, "ids": array_text(chunk), "held": "held", "replayed": "replayed", "target": "",
                  "now": "now", "replay_ids": array_text([replay_id(JOB, letter_id) for letter_id in chunk])}
        take, record = (MARK_BEFORE, RECORD_BEFORE) if way == "before" else (_TAKE_SQL, _RECORD_SQL)
        with transaction.atomic():
            cursor.execute(take, params)
            assert len(cursor.fetchall()) == len(chunk)
        with transaction.atomic():
            cursor.execute(record, {**params, "now": _now()})
    seconds = time.perf_counter() - started
    cursor.execute("SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), %s)", [start_lsn])
    (wal,) = cursor.fetchone()
    return seconds, float(wal)


def _now():
    from django.utils import timezone

    return timezone.now()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--letters", type=int, default=1_000_000)
    parser.add_argument("--block", type=int, default=20_000)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=1000)
    args = parser.parse_args()
    setup_django()

    from django.db import connection, transaction

    from console.models import DeadLetter, LetterFlight

    held = DeadLetter.objects.count()
    if held < args.letters:
        seeded_place("orders.dlq", args.letters - held, samples=False)
        vacuum_analyze()
    place_id = DeadLetter.objects.filter(state="held").order_by("id").values_list("place_id", flat=True).first()
    ids = list(DeadLetter.objects.filter(place_id=place_id, state="held").order_by("id")
               .values_list("id", flat=True)[:args.block])
    print(f"{DeadLetter.objects.count():,} letters held; blocks of {len(ids):,} letters of place {place_id}, "
          f"batches of {args.batch:,}\n")
    print(f"{'way':>7} {'seconds':>8} {'µs/letter':>10} {'WAL B/letter':>13}")
    times: dict[str, list[float]] = {"before": [], "today": []}
    with connection.cursor() as cursor:
        for _ in range(args.pairs):
            for way in ("before", "today"):
                seconds, wal = run_block(cursor, ids, args.batch, way)
                times[way].append(seconds)
                print(f"{way:>7} {seconds:8.2f} {seconds / len(ids) * 1e6:10.1f} {wal / len(ids):13,.0f}", flush=True)
                with transaction.atomic():
                    cursor.execute(RESET, {"ids": "{" + ",".join(map(str, ids)) + "}"})
                    LetterFlight.objects.filter(job_id=JOB).delete()
                vacuum_analyze()
    before, today = statistics.median(times["before"]), statistics.median(times["today"])
    print(f"\nmedian µs/letter: before {before / len(ids) * 1e6:.1f}, today {today / len(ids) * 1e6:.1f}; "
          f"today / before {today / before:.2f}x")


if __name__ == "__main__":
    main()
