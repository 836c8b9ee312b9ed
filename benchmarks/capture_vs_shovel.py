"""Capture of 100,000 letters of 1 KiB from a RabbitMQ dead-letter queue, against the shovel.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/dlo_bench6 .venv/bin/python benchmarks/capture_vs_shovel.py

``--count N`` (default 100,000). The database is created when missing and migrated. On the
RabbitMQ of benchmarks/broker_bench.py (127.0.0.1, guest) the run declares a DLQ and an
origin queue with ``x-message-ttl`` 0 that dead-letters into it through the default
exchange, publishes N persistent 1 KiB messages to the origin with confirms and waits until
RabbitMQ has dead-lettered all N (each then carries a real ``x-death``). It adds a broker and
discovers the DLQ through the services, then captures it with a capture job
(console.services.jobs.do_capture, approved by a second actor, run by
console.jobs.door.runner.run_job in this process), timed, with its peak resident memory; it checks
that N letters are in custody and the DLQ is empty. The baseline, in the same run: the
dynamic shovel of broker_bench.shovel_baseline moving N persistent 1 KiB messages between two
queues.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import broker_bench as bench  # noqa: E402
from benchmarks import harness  # noqa: E402


def main() -> None:
    args = bench.start(__doc__)

    from console.jobs.door.requests import request_job
    from console.models import DeadLetter, Job

    prefix = bench.unique_prefix("capture")
    origin, dlq = f"{prefix}.orders", f"{prefix}.orders.dlq"
    rabbit = bench.Rabbit()
    place = None
    try:
        rabbit.declare(dlq)
        rabbit.declare(origin, {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq,
                                "x-message-ttl": 0})
        seconds = rabbit.publish(origin, args.count, prefix=prefix,
                                 headers={"x-exception-fqcn": "java.lang.IllegalStateException",
                                          "x-exception-message": "Order is already closed"})
        rabbit.wait_depth(dlq, args.count)
        print(f"published {args.count:,} messages of {bench.BODY_SIZE} bytes with confirms in {seconds:.1f} s; "
              f"all dead-lettered into {dlq}")
        place = bench.add_broker_and_discover(prefix, dlq)

        job = request_job("capture", place=place, actor=bench.REQUESTER, reason="benchmark: capture vs shovel")
        job = bench.approve_if_waiting(job)
        measured = bench.run_measured(job.pk)
        job = Job.objects.get(pk=job.pk)
        in_custody = DeadLetter.objects.filter(place=place).count()
        left = rabbit.depth(dlq)
        print(f"capture job {job.pk}: {measured['status']}, done {job.done:,}; {in_custody:,} letters in custody; "
              f"DLQ holds {left:,}")
        if measured["status"] != Job.Status.SUCCEEDED or in_custody != args.count or left != 0:
            raise SystemExit(f"the capture did not take exactly {args.count:,} letters and empty {dlq}")

        baseline = bench.shovel_baseline(rabbit, prefix, args.count)
        bench.report("Capture against the shovel", args.count, measured, baseline)
    finally:
        rabbit.cleanup()
        if place is not None and not args.keep_letters:
            harness.delete_letters(place)


if __name__ == "__main__":
    main()
