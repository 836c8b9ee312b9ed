"""Replay of 100,000 letters of 1 KiB to RabbitMQ, against the shovel on the same broker.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/dlo_bench6 .venv/bin/python benchmarks/replay_vs_shovel.py

``--count N`` (default 100,000). The database is created when missing and migrated. On the
RabbitMQ of benchmarks/broker_bench.py (127.0.0.1, guest) the run declares an origin queue
that dead-letters into a DLQ, adds a broker and discovers the DLQ through the services,
writes N held letters of 1 KiB for that place straight into custody (COPY, as
seed_letters.py does: fixtures, not a capture), then replays them all with a replay job
(console.jobs.door.requests.request_job, approved by a second actor, run by
console.jobs.door.runner.run_job in this process). It times the job, reads its peak resident
memory, and checks that the origin queue then holds exactly N messages. The baseline, in the
same run: N persistent 1 KiB messages published with confirms to a queue, then moved to a
second queue by RabbitMQ's dynamic shovel (ack-mode on-confirm, src-delete-after
queue-length), timed until the second queue holds them all and the shovel is gone.
"""

from __future__ import annotations

import hashlib
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import broker_bench as bench  # noqa: E402
from benchmarks import harness  # noqa: E402


def seed_custody(place, origin: str, count: int, batch: int = 10_000) -> None:
    """N held letters of the place, dead-lettered from ``origin``, bodies of 1 KiB (COPY)."""
    from django.db import connection, transaction
    from django.utils import timezone
    from psycopg.types.json import Jsonb

    from benchmarks.seed_letters import COLUMNS
    from console.letters.envelope import FailureEnvelope

    exc_type, message = "java.lang.IllegalStateException", "Order is already closed"
    stack = f"{exc_type}: {message}\n\tat com.example.orders.Handler.handle(Handler.java:42)"
    fingerprint = FailureEnvelope(origin_queue=origin, reason="rejected", exception_type=exc_type,
                                  exception_message=message, exception_stack=stack).fingerprint()
    now = timezone.now()
    sql = f"COPY console_deadletter ({', '.join(COLUMNS)}) FROM STDIN"
    for start in range(0, count, batch):
        with transaction.atomic(), connection.cursor() as cursor:
            with cursor.cursor.copy(sql) as copy:
                for serial in range(start, min(start + batch, count)):
                    body = bench.body_of(serial)
                    message_id = f"{origin}-{serial}"
                    headers = {
                        "content-type": "application/json", "tenant": f"tenant-{serial % 40:02d}",
                        "trace-id": uuid.uuid4().hex, "x-first-death-queue": origin,
                        "x-first-death-reason": "rejected", "x-exception-fqcn": exc_type,
                        "x-exception-message": message,
                        "x-death": [{"queue": origin, "reason": "rejected", "count": 1, "exchange": "",
                                     "routing-keys": [origin]}],
                    }
                    copy.write_row((
                        place.pk, place.broker_id, "held", now, message_id,
                        hashlib.sha256(message_id.encode() + body).hexdigest(),
                        now, "", origin, origin, "rejected", 1,
                        now, now, exc_type, message, stack,
                        fingerprint, Jsonb({}), Jsonb(headers),
                        Jsonb({"message_id": message_id, "delivery_mode": 2, "content_type": "application/json"}),
                        body, len(body), False, "", "", 0, "",
                    ))
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE console_deadletter")


def main() -> None:
    args = bench.start(__doc__)

    from console.jobs.door.requests import request_job
    from console.models import DeadLetter, Job, LetterState

    prefix = bench.unique_prefix("replay")
    origin, dlq = f"{prefix}.orders", f"{prefix}.orders.dlq"
    rabbit = bench.Rabbit()
    place = None
    try:
        rabbit.declare(dlq)
        rabbit.declare(origin, {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})
        place = bench.add_broker_and_discover(prefix, dlq)
        started = time.perf_counter()
        seed_custody(place, origin, args.count)
        print(f"seeded {args.count:,} held letters of {bench.BODY_SIZE} bytes for {place} in "
              f"{time.perf_counter() - started:.1f} s")

        job = request_job("replay", actor=bench.REQUESTER, reason="benchmark: replay vs shovel",
                        filter={"place": place.pk, "state": LetterState.HELD}, concurrency=args.concurrency)
        job = bench.approve_if_waiting(job)
        measured = bench.run_in_worker(job.pk) if args.worker else bench.run_measured(job.pk)
        job = Job.objects.get(pk=job.pk)
        on_origin = rabbit.depth(origin)
        replayed = DeadLetter.objects.filter(place=place, state=LetterState.REPLAYED).count()
        print(f"replay job {job.pk}: {measured['status']}, done {job.done:,}, failed {job.failed:,}, "
              f"skipped {job.skipped:,}; {replayed:,} letters replayed; origin queue holds {on_origin:,}")
        if measured["status"] != Job.Status.SUCCEEDED or on_origin != args.count or replayed != args.count:
            raise SystemExit(f"the replay did not put exactly {args.count:,} messages on {origin}")

        baseline = bench.shovel_baseline(rabbit, prefix, args.count)
        bench.report("Replay against the shovel", args.count, measured, baseline)
    finally:
        rabbit.cleanup()
        if place is not None and not args.keep_letters:
            harness.delete_letters(place)


if __name__ == "__main__":
    main()
