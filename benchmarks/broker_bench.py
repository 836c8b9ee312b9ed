"""What replay_vs_shovel.py and capture_vs_shovel.py share: Django set-up, a small RabbitMQ
client of their own (publishing with confirms, exact queue depths, the dynamic shovel), the
console's broker and dead place for a run, and a job run with its time and peak memory.

The broker is a real RabbitMQ: ``BENCH_AMQP_URL`` (default amqp://guest:guest@127.0.0.1:5672/%2F)
and ``BENCH_MANAGEMENT_URL`` (default http://guest:guest@127.0.0.1:15672), with the shovel
plugins enabled (``scripts/services`` enables them). Every queue a run declares carries a
unique prefix and is deleted at the end, as is the shovel's parameter if it is still there.
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import time
import uuid
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

AMQP_URL = os.environ.get("BENCH_AMQP_URL", "amqp://guest:guest@127.0.0.1:5672/%2F")
MANAGEMENT_URL = os.environ.get("BENCH_MANAGEMENT_URL", "http://guest:guest@127.0.0.1:15672")
BODY_SIZE = 1024  # --body-size
BINARY_BODIES = False  # --binary: random bytes, the worst case for the body-text index
#: The job asks for approval (over DLO_APPROVAL_THRESHOLD letters); a second actor approves it.
REQUESTER = "cli:bench-requester"
APPROVER = "cli:bench-approver"


def start(doc: str):
    """The command line both benchmarks take, then Django set up; returns the parsed args."""
    import argparse

    global BODY_SIZE, BINARY_BODIES
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--body-size", type=int, default=BODY_SIZE, help="bytes a message (default 1 KiB)")
    parser.add_argument("--binary", action="store_true", help="bodies of random bytes instead of padded JSON")
    parser.add_argument("--keep-letters", action="store_true", help="leave the run's letters in the database")
    parser.add_argument("--concurrency", type=int, default=1, help="a replay's connections publishing at once")
    parser.add_argument("--worker", action="store_true",
                        help="run the job in a real `celery -A console worker` process (its memory is measured)")
    args = parser.parse_args()
    BODY_SIZE, BINARY_BODIES = args.body_size, args.binary
    from console.malloc import give_back_large_blocks

    give_back_large_blocks()  # as the worker does: this process plays it
    if args.worker:
        # The job goes to the worker the way the console sends it: queued on commit.
        import tempfile

        os.environ["CELERY_BROKER_URL"] = "filesystem://"
        os.environ["CELERY_FILESYSTEM_DIR"] = tempfile.mkdtemp(prefix="dlo-bench-celery-")
    setup_django()
    from benchmarks.harness import vacuum_analyze

    vacuum_analyze()  # what earlier runs deleted is not left for this one to read past
    return args


def setup_django() -> None:
    """Create and migrate DATABASE_URL, Django set up for a script (benchmarks.harness)."""
    from benchmarks.harness import setup_django as setup

    setup(example="dlo_bench6")


# -- RabbitMQ, apart from the console ------------------------------------------------------------

def body_of(serial: int) -> bytes:
    """A body of exactly BODY_SIZE bytes, different for every serial: JSON (padded), or random
    bytes with --binary."""
    size = BODY_SIZE
    if BINARY_BODIES:
        return serial.to_bytes(8, "big") + os.urandom(max(0, size - 8))
    head = b'{"order_id": %d, "currency": "EUR", "note": "' % serial
    tail = b'"}'
    return head + b"x" * max(0, size - len(head) - len(tail)) + tail


class Rabbit:
    """Synchronous helper over aio-pika on a private event loop thread, plus the management API."""

    def __init__(self, amqp_url: str = AMQP_URL, management_url: str = MANAGEMENT_URL) -> None:
        import httpx

        self.amqp_url = amqp_url
        parts = urlsplit(amqp_url)
        self.vhost = unquote(parts.path[1:]) if parts.path not in ("", "/") else "/"
        mgmt = urlsplit(management_url)
        self.management_base = urlunsplit((mgmt.scheme, mgmt.hostname + (f":{mgmt.port}" if mgmt.port else ""),
                                           "", "", ""))
        self.http = httpx.Client(base_url=self.management_base, timeout=30,
                                 auth=(unquote(mgmt.username or "guest"), unquote(mgmt.password or "guest")))
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="bench-rabbit", daemon=True)
        self.thread.start()
        self.connection = self.run(self._connect())
        self.declared: list[str] = []
        self.shovels: list[str] = []

    def run(self, coro, timeout: float = 900):
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    async def _connect(self):
        import aio_pika

        return await aio_pika.connect(self.amqp_url)

    def declare(self, name: str, arguments: dict | None = None) -> None:
        async def declare():
            channel = await self.connection.channel()
            await channel.declare_queue(name, durable=True, arguments=arguments)
            await channel.close()

        self.run(declare())
        self.declared.append(name)

    def depth(self, name: str) -> int:
        """Ready messages in a queue, exactly (passive declare; the management API lags)."""
        async def depth():
            channel = await self.connection.channel()
            queue = await channel.declare_queue(name, passive=True)
            count = queue.declaration_result.message_count
            await channel.close()
            return count

        return self.run(depth())

    def publish(self, queue: str, count: int, *, prefix: str, window: int = 1000,
                headers: dict | None = None, expiration: float | None = None) -> float:
        """Publish ``count`` persistent messages of BODY_SIZE bytes to ``queue`` with publisher
        confirms, ``window`` outstanding at a time; returns the seconds it took. With
        ``expiration`` (seconds) each message expires that long after it reaches the queue's
        head: 0 dead-letters it at once, as a consumer's rejection would."""
        import aio_pika

        async def publish():
            channel = await self.connection.channel(publisher_confirms=True)
            exchange = channel.default_exchange
            for start in range(0, count, window):
                await asyncio.gather(*(
                    exchange.publish(
                        aio_pika.Message(body_of(serial), delivery_mode=aio_pika.DeliveryMode.PERSISTENT,
                                         message_id=f"{prefix}-{serial}", content_type="application/json",
                                         headers={**(headers or {}), "tenant": f"tenant-{serial % 40:02d}"},
                                         expiration=expiration),
                        routing_key=queue,
                    )
                    for serial in range(start, min(start + window, count))
                ))
            await channel.close()

        started = time.perf_counter()
        self.run(publish())
        return time.perf_counter() - started

    def wait_depth(self, queue: str, count: int, timeout: float = 300) -> None:
        deadline = time.monotonic() + timeout
        while self.depth(queue) < count:
            if time.monotonic() > deadline:
                raise SystemExit(f"{queue} holds {self.depth(queue)} messages, not {count}, after {timeout:.0f} s")
            time.sleep(0.1)

    def shovel(self, src: str, dest: str, expected: int, *, uri: str | None = None, timeout: float = 900) -> float:
        """Move ``src`` to ``dest`` with a dynamic shovel (ack-mode on-confirm, deleting itself
        after the queue's length at its start); returns the seconds from creating it until
        ``dest`` holds ``expected`` messages (a passive declare), then waits, untimed, until the
        shovel is gone (removing itself is the broker's bookkeeping, not moving)."""
        name = f"{src}-shovel"
        uri = uri or self.amqp_url
        value = {
            "src-protocol": "amqp091", "src-uri": uri, "src-queue": src,
            "dest-protocol": "amqp091", "dest-uri": uri, "dest-queue": dest,
            "ack-mode": "on-confirm", "src-delete-after": "queue-length",
        }
        path = f"/api/parameters/shovel/{quote(self.vhost, safe='')}/{quote(name, safe='')}"
        self.shovels.append(path)
        started = time.perf_counter()
        response = self.http.put(path, json={"value": value})
        response.raise_for_status()
        deadline = time.monotonic() + timeout
        while self.depth(dest) < expected:
            if time.monotonic() > deadline:
                raise SystemExit(f"the shovel did not finish within {timeout:.0f} s")
            time.sleep(0.02)
        seconds = time.perf_counter() - started
        while self.http.get(path).status_code != 404:
            if time.monotonic() > deadline:
                raise SystemExit(f"the shovel did not remove itself within {timeout:.0f} s")
            time.sleep(0.05)
        return seconds

    def purge(self, name: str) -> None:
        self.http.delete(f"/api/queues/{quote(self.vhost, safe='')}/{quote(name, safe='')}/contents").raise_for_status()

    def cleanup(self) -> None:
        for path in self.shovels:
            try:
                self.http.delete(path)
            except Exception:
                pass
        for name in self.declared:
            try:
                self.http.delete(f"/api/queues/{quote(self.vhost, safe='')}/{quote(name, safe='')}")
            except Exception as exc:
                print(f"could not delete queue {name}: {exc}")
        try:
            self.run(self.connection.close(), 10)
        except Exception:
            pass
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.http.close()


def unique_prefix(what: str) -> str:
    return f"bench6.{what}.{uuid.uuid4().hex[:8]}"


def shovel_baseline(rabbit: Rabbit, prefix: str, count: int) -> dict:
    """The baseline of both benchmarks: publish ``count`` persistent 1 KiB messages with
    confirms to a queue, then time the dynamic shovel moving them all to a second queue."""
    src, dest = f"{prefix}.shovel.src", f"{prefix}.shovel.dest"
    rabbit.declare(src)
    rabbit.declare(dest)
    publish_seconds = rabbit.publish(src, count, prefix=f"{prefix}-shovel")
    rabbit.wait_depth(src, count)
    seconds = rabbit.shovel(src, dest, count)
    held = rabbit.depth(dest)
    if held != count:
        raise SystemExit(f"the shovel left {held} messages in {dest}, not {count}")
    return {"seconds": seconds, "rate": count / seconds, "publish_seconds": publish_seconds,
            "publish_rate": count / publish_seconds}


def dead_letter_shovel_baseline(rabbit: Rabbit, prefix: str, count: int, headers: dict) -> dict:
    """What an operator would do instead of the console: the shovel moving ``count`` dead
    letters (1 KiB, dead-lettered by expiry: x-death and the given headers) out of their DLQ
    to a queue, timed from its creation until that queue holds them all."""
    origin, dlq, dest = f"{prefix}.dl.origin", f"{prefix}.dl.dlq", f"{prefix}.dl.dest"
    rabbit.declare(dlq)
    rabbit.declare(dest)
    rabbit.declare(origin, {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})
    rabbit.publish(origin, count, prefix=f"{prefix}-dl", expiration=0, headers=headers)
    rabbit.wait_depth(dlq, count)
    seconds = rabbit.shovel(dlq, dest, count)
    held = rabbit.depth(dest)
    for name in (origin, dlq, dest):
        rabbit.purge(name)
    if held != count:
        raise SystemExit(f"the dead-letter shovel left {held} messages in {dest}, not {count}")
    return {"seconds": seconds, "rate": count / seconds}


# -- the console's side --------------------------------------------------------------------------

def add_broker_and_discover(prefix: str, place_name: str):
    """The broker (a new name per run) through do_add_broker, its dead places through
    do_discover; returns the DeadPlace named ``place_name`` (the management API may take a
    moment to list a queue just declared, so discovery is tried again for a few seconds)."""
    from console.services.brokers import do_add_broker, do_discover

    broker = do_add_broker(actor=REQUESTER, name=prefix.replace(".", "-"), kind="rabbitmq", url=AMQP_URL,
                           management_url=MANAGEMENT_URL)
    deadline = time.monotonic() + 30
    while True:
        for place in do_discover(broker, actor=REQUESTER):
            if place.name == place_name:
                return place
        if time.monotonic() > deadline:
            raise SystemExit(f"discovery did not find {place_name} on {AMQP_URL}")
        time.sleep(1)


def approve_if_waiting(job):
    """The two-person rule: a job over DLO_APPROVAL_THRESHOLD waits; a second actor approves it."""
    from console.jobs.door.approvals import do_approve
    from console.models import Job

    job.refresh_from_db()
    if job.status == Job.Status.AWAITING_APPROVAL:
        job = do_approve(job, actor=APPROVER, reason="benchmark")
    return job


def run_measured(job_id: int) -> dict:
    """console.jobs.door.runner.run_job in this process: wall time and peak resident memory."""
    from benchmarks.harness import lifetime_peak_rss_mib, peak_rss_mib, reset_peak_rss
    from console.jobs.door.runner import run_job

    reset = reset_peak_rss()
    readers = ReaderPeak()
    started, cpu = time.perf_counter(), time.process_time()
    try:
        status = run_job(job_id)
    finally:
        readers.stop()
    seconds = time.perf_counter() - started
    return {"status": status, "seconds": seconds, "cpu_seconds": time.process_time() - cpu,
            "child_peak_rss_mib": readers.peak_mib or None,
            "peak_rss_mib": peak_rss_mib() if reset else None, "lifetime_peak_rss_mib": lifetime_peak_rss_mib()}


class ReaderPeak:
    """The peak resident memory (VmHWM) of this process's capture readers, read from /proc every
    0.1 s while a job runs. (getrusage's RUSAGE_CHILDREN would count this process's own peak too:
    Linux keeps the high-water mark of the memory a child had before its exec.)"""

    def __init__(self) -> None:
        self.peak_mib = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        from tests.workers import readers_of

        while not self._stop.wait(0.1):
            for reader in readers_of(os.getpid()):
                try:
                    self.peak_mib = max(self.peak_mib, _status_mib(reader, "VmHWM"))
                except OSError:
                    continue  # it exited meanwhile

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def run_in_worker(job_id: int) -> dict:
    """Start a Celery worker (it takes the job queued on commit), follow the job to its end,
    and sample the worker's resident memory every second (VmRSS; VmHWM at the end)."""
    from django.conf import settings

    from console.models import Job
    from tests.workers import Worker

    # DEBUG off as in production (with DEBUG on, Django keeps the last 9,000 queries in memory);
    # the same SECRET_KEY, so the worker can read the broker's password.
    folder = Path(os.environ["CELERY_FILESYSTEM_DIR"])
    worker = Worker(folder, folder / "worker.log", LOG_LEVEL="WARNING", DEBUG="false",
                    SECRET_KEY=settings.SECRET_KEY)
    process = worker.start()
    samples: list[tuple[int, float]] = []
    started = time.perf_counter()
    try:
        while True:
            job = Job.objects.get(pk=job_id)
            samples.append((job.done + job.failed + job.skipped, _status_mib(process.pid, "VmRSS")))
            if job.is_finished or job.status == Job.Status.PAUSED:
                break
            if not worker.alive():
                raise SystemExit(f"the worker died:\n{worker.log()}")
            time.sleep(1)
        seconds = ((job.finished_at - job.started_at).total_seconds() if job.finished_at
                   else time.perf_counter() - started)
        peak = _status_mib(process.pid, "VmHWM")
    finally:
        worker.kill()
    total = max(job.total, 1)
    at = {share: next((rss for done, rss in samples if done >= total * share), samples[-1][1])
          for share in (0.1, 0.5, 0.9)}
    print("worker RSS at 10% / 50% / 90% of the letters: " + " / ".join(f"{at[s]:.0f}" for s in sorted(at)) + " MiB")
    return {"status": job.status, "seconds": seconds, "peak_rss_mib": peak, "lifetime_peak_rss_mib": peak}


def _status_mib(pid: int, field: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return 0.0


def report(title: str, count: int, job: dict, baseline: dict) -> None:
    rate = count / job["seconds"]
    ratio = rate / baseline["rate"]
    peak = f"{job['peak_rss_mib']:.0f} MiB" if job["peak_rss_mib"] is not None else "n/a"
    print(f"\n{title}: {count:,} letters of {BODY_SIZE} bytes")
    print(f"  console job   {job['seconds']:8.1f} s  {rate:9,.0f} letters/s   peak RSS during the job {peak}"
          f" (whole process {job['lifetime_peak_rss_mib']:.0f} MiB)")
    if job.get("child_peak_rss_mib"):
        print(f"  its reader process: peak RSS {job['child_peak_rss_mib']:.0f} MiB")
    if job.get("cpu_seconds") is not None:  # steadier than wall time when comparing two versions
        print(f"  console job CPU {job['cpu_seconds']:6.1f} s in this process "
              f"({job['cpu_seconds'] / count * 1e6:.0f} µs a letter)")
    print(f"  shovel        {baseline['seconds']:8.1f} s  {baseline['rate']:9,.0f} messages/s"
          f"   (its source published with confirms first: {baseline['publish_seconds']:.1f} s, "
          f"{baseline['publish_rate']:,.0f} messages/s)")
    print(f"  ratio job / shovel {ratio:.2f}   (target >= 0.5: {'met' if ratio >= 0.5 else 'NOT met'})")
