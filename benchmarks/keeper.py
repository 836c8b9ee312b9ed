"""The keeper (``manage.py keep``) on a real RabbitMQ: a stream of deaths into one kept place,
then many kept places that each get a letter now and then.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/dlo_bench_keeper .venv/bin/python benchmarks/keeper.py

1. **Stream**: an origin queue with ``x-message-ttl`` 0 dead-letters every message at once into
   its DLQ, which is kept in custody. This process publishes ``--rate`` messages a second (default
   2,000, 1 KiB, persistent, with confirms) for ``--seconds`` (default 60), each naming in its
   message id the moment it was sent, i.e. the moment it died. The keeper runs as its own process
   (DEBUG off, as in production). Printed: death-to-custody p50 / p95 / p99 / max (the letter's
   ``captured_at`` against its sending), the DLQ's depth each ten seconds, the keeper's resident
   memory each ten seconds with its reader processes, and its CPU.
   **Baseline** in the same run: the same publisher into a second DLQ read by a bare aio-pika
   consumer in this process (acknowledging each message on arrival, storing nothing), for
   ``--baseline-seconds`` (default 20): its death-to-arrival percentiles; the ratio of the
   console's p95 to it.
2. **Many places**: ``--places`` kept DLQs (default 200); one letter dies into one of them,
   chosen at random, ``--trickle`` times a second (default 20, so each place gets one every ten
   seconds or so) for ``--seconds``. Printed: death-to-custody percentiles, and the keeper's CPU
   (share of one core) and memory.

The run's queues are deleted at the end, and its letters unless ``--keep-letters``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import broker_bench as bench  # noqa: E402
from benchmarks import harness  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TICK = 0.01  # the publisher sends each tick's share, then sleeps to the next tick


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rate", type=int, default=2000, help="deaths a second into the one place")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--baseline-seconds", type=float, default=20)
    parser.add_argument("--places", type=int, default=200)
    parser.add_argument("--trickle", type=float, default=20, help="deaths a second over all the places")
    parser.add_argument("--keep-letters", action="store_true")
    parser.add_argument("--only", choices=["stream", "places"], help="run one part")
    args = parser.parse_args()
    from console.malloc import give_back_large_blocks

    give_back_large_blocks()
    bench.setup_django()
    harness.vacuum_analyze()

    rabbit = bench.Rabbit()
    places = []
    try:
        if args.only in (None, "stream"):
            places += stream(rabbit, args)
        if args.only in (None, "places"):
            places += many_places(rabbit, args)
    finally:
        rabbit.cleanup()
        if not args.keep_letters:
            for place in places:
                harness.delete_letters(place)


# -- the two parts --------------------------------------------------------------------------------

def stream(rabbit: bench.Rabbit, args) -> list:
    prefix = bench.unique_prefix("keeper")
    origin, dlq = dead_queue(rabbit, prefix)
    place = bench.add_broker_and_discover(prefix, dlq)
    keep([place])

    base_origin, base_dlq = dead_queue(rabbit, f"{prefix}.baseline")
    print(f"\nbaseline: a bare consumer reading {base_dlq}, {args.rate:,} deaths/s for {args.baseline_seconds:.0f} s")
    baseline = bare_consumer_latencies(rabbit, base_origin, base_dlq, args.rate, args.baseline_seconds, prefix)
    print_latencies("bare consumer, death to arrival", baseline)

    print(f"\nstream: {args.rate:,} deaths/s into the kept {dlq} for {args.seconds:.0f} s")
    with KeeperProcess() as keeper:
        keeper.wait_running([place])
        sent = publish_paced(rabbit, {0: origin}, args.rate, args.seconds, prefix,
                             every_ten_seconds=lambda t: print(
                                 f"  {t:3.0f} s: DLQ depth {rabbit.depth(dlq):6,}; keeper {keeper.usage()}"))
        wait_in_custody([place], sent, rabbit, [dlq])
        print(f"  all {sent:,} letters in custody; keeper {keeper.usage()}")
        print(f"  keeper RSS by the time (s): {keeper.rss_line()}")
    latencies = custody_latencies([place])
    print_latencies("kept place, death to custody", latencies)
    p95, base95 = harness.percentile(latencies, 95), harness.percentile(baseline, 95)
    print(f"  p95 {p95 * 1000:.0f} ms against the bare consumer's {base95 * 1000:.0f} ms: ratio {p95 / base95:.1f}")
    return [place]


def many_places(rabbit: bench.Rabbit, args) -> list:
    prefix = bench.unique_prefix("keeper-many")
    origins, dlqs = {}, []
    for n in range(args.places):
        origin, dlq = dead_queue(rabbit, f"{prefix}.p{n:03d}")
        origins[n], dlqs = origin, dlqs + [dlq]
    first = bench.add_broker_and_discover(prefix, dlqs[-1])
    from console.models import DeadPlace

    places = list(DeadPlace.objects.filter(broker=first.broker, name__in=dlqs))
    keep(places)
    print(f"\nmany places: {len(places)} kept places, {args.trickle:g} deaths/s among them for {args.seconds:.0f} s")
    with KeeperProcess() as keeper:
        keeper.wait_running(places)
        idle_cpu = keeper.cpu_share_over(5)
        print(f"  keeper idle over {len(places)} places: {idle_cpu:.0%} of a core; {keeper.usage()}")
        keeper.mark()
        sent = publish_paced(rabbit, origins, args.trickle, args.seconds, prefix, spread=True,
                             every_ten_seconds=lambda t: print(f"  {t:3.0f} s: keeper {keeper.usage()}"))
        wait_in_custody(places, sent, rabbit, dlqs)
        print(f"  all {sent:,} letters in custody; keeper used {keeper.cpu_share_since_mark():.0%} of a core "
              f"while they died; {keeper.usage()}")
        print(f"  keeper RSS by the time (s): {keeper.rss_line()}")
    print_latencies("many places, death to custody", custody_latencies(places))
    return places


# -- the broker's side ----------------------------------------------------------------------------

def dead_queue(rabbit: bench.Rabbit, prefix: str) -> tuple[str, str]:
    """An origin whose messages die at once (TTL 0) into its DLQ."""
    origin, dlq = f"{prefix}.orders", f"{prefix}.orders.dlq"
    rabbit.declare(dlq)
    rabbit.declare(origin, {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq, "x-message-ttl": 0})
    return origin, dlq


def publish_paced(rabbit: bench.Rabbit, origins: dict[int, str], rate: float, seconds: float, prefix: str, *,
                  spread: bool = False, every_ten_seconds=lambda t: None) -> int:
    """Publish ``rate`` messages a second for ``seconds``, each with its sending time (ns) in
    its message id; to the one origin, or (``spread``) each to one chosen at random."""
    import aio_pika

    chance = random.Random(7)
    body = bench.body_of(0)
    report_at = [10.0]

    async def publish() -> int:
        channel = await rabbit.connection.channel(publisher_confirms=True)
        exchange = channel.default_exchange
        started, sent, pending = time.monotonic(), 0, []
        while (now := time.monotonic() - started) < seconds:
            due = int(now * rate) + 1 - sent
            for _ in range(max(0, due)):
                origin = origins[chance.randrange(len(origins))] if spread else origins[0]
                message = aio_pika.Message(body, delivery_mode=aio_pika.DeliveryMode.PERSISTENT,
                                           message_id=f"{prefix}-{sent}-{time.time_ns()}")
                pending.append(asyncio.ensure_future(exchange.publish(message, routing_key=origin)))
                sent += 1
            if len(pending) > 2000:
                await asyncio.gather(*pending)
                pending = []
            if now >= report_at[0]:
                report_at[0] += 10
                threading.Thread(target=every_ten_seconds, args=(now,)).start()
            await asyncio.sleep(TICK)
        await asyncio.gather(*pending)
        await channel.close()
        return sent

    return rabbit.run(publish())


def bare_consumer_latencies(rabbit: bench.Rabbit, origin: str, dlq: str, rate: float, seconds: float,
                            prefix: str) -> list[float]:
    """The baseline: messages dying at ``rate`` read by a bare consumer; death-to-arrival seconds."""
    arrived: list[float] = []

    async def consume():
        channel = await rabbit.connection.channel()
        await channel.set_qos(prefetch_count=1000)
        queue = await channel.declare_queue(dlq, passive=True)

        async def on_message(message):
            arrived.append(time.time() - int(message.message_id.rsplit("-", 1)[1]) / 1e9)
            await message.ack()

        tag = await queue.consume(on_message)
        return channel, queue, tag

    channel, queue, tag = rabbit.run(consume())
    sent = publish_paced(rabbit, {0: origin}, rate, seconds, f"{prefix}-base")
    deadline = time.monotonic() + 60
    while len(arrived) < sent and time.monotonic() < deadline:
        time.sleep(0.1)
    rabbit.run(queue.cancel(tag))
    rabbit.run(channel.close())
    return arrived


# -- the console's side ---------------------------------------------------------------------------

def keep(places: list) -> None:
    from console.services.keeping import do_keep

    for place in places:
        do_keep(place, True, actor=bench.REQUESTER, reason="benchmark: kept in custody")


def wait_in_custody(places: list, sent: int, rabbit: bench.Rabbit, dlqs: list[str], timeout: float = 300) -> None:
    from console.models import DeadLetter

    deadline = time.monotonic() + timeout
    while DeadLetter.objects.filter(place__in=places).count() < sent:
        if time.monotonic() > deadline:
            held = DeadLetter.objects.filter(place__in=places).count()
            raise SystemExit(f"only {held:,} of {sent:,} letters reached custody within {timeout:.0f} s; "
                             f"{sum(rabbit.depth(q) for q in dlqs):,} left on the broker")
        time.sleep(0.2)


def custody_latencies(places: list) -> list[float]:
    """Seconds from each letter's death (its sending, in its message id) to its ``captured_at``."""
    from console.models import DeadLetter

    rows = DeadLetter.objects.filter(place__in=places).values_list("message_id", "captured_at")
    return [at.timestamp() - int(mid.rsplit("-", 1)[1]) / 1e9 for mid, at in rows]


def print_latencies(what: str, seconds: list[float]) -> None:
    if not seconds:
        print(f"  {what}: no letters")
        return
    line = " / ".join(f"{harness.percentile(seconds, q) * 1000:.0f}" for q in (50, 95, 99))
    print(f"  {what} ({len(seconds):,} letters): p50 / p95 / p99 {line} ms, max {max(seconds) * 1000:.0f} ms")


class KeeperProcess:
    """``manage.py keep`` on the benchmark's database, DEBUG off; its memory and CPU (with its
    reader processes) read from /proc."""

    def __init__(self) -> None:
        from django.conf import settings

        env = {**os.environ, "DEBUG": "false", "SECRET_KEY": settings.SECRET_KEY, "LOG_LEVEL": "WARNING",
               "ALLOWED_HOSTS": "localhost"}
        self.log = open(ROOT / "var" / "bench-keeper.log", "a")
        self.process = subprocess.Popen([sys.executable, "manage.py", "keep"], cwd=ROOT, env=env, stdout=self.log,
                                        stderr=subprocess.STDOUT)
        self.started = time.monotonic()
        self.rss: list[tuple[float, float]] = []
        self._mark = self._cpu(), time.monotonic()
        self._stop = threading.Event()
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._sampler.start()

    def __enter__(self) -> KeeperProcess:
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self.process.terminate()
        self.process.wait(60)
        self.log.close()

    def wait_running(self, places: list, timeout: float = 60) -> None:
        from console.models import Job

        deadline = time.monotonic() + timeout
        while Job.objects.filter(kind="keep", place__in=places, status="running").count() < len(places):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the keeper did not take up the places; see {self.log.name}")
            time.sleep(0.2)

    def _pids(self) -> list[int]:
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        try:
            return [self.process.pid, *(int(pid) for pid in children.read_text().split())]
        except OSError:
            return [self.process.pid]

    def _cpu(self) -> float:
        """CPU seconds of the keeper and its live readers, plus readers that exited (cutime)."""
        total = 0.0
        for pid in self._pids():
            try:
                fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            children = sum(int(f) for f in fields[13:15]) if pid == self.process.pid else 0
            total += sum(int(f) for f in fields[11:13]) + children
        return total / os.sysconf("SC_CLK_TCK")

    def _rss_mib(self) -> float:
        total = 0.0
        for pid in self._pids():
            try:
                total += bench._status_mib(pid, "VmRSS")
            except OSError:
                continue
        return total

    def _sample(self) -> None:
        while not self._stop.wait(1.0):
            self.rss.append((time.monotonic() - self.started, self._rss_mib()))

    def usage(self) -> str:
        return f"RSS {self._rss_mib():.0f} MiB (with its readers), CPU {self._cpu():.1f} s in all"

    def rss_line(self) -> str:
        return ", ".join(f"{t:.0f}: {mib:.0f}" for t, mib in self.rss[::10])

    def cpu_share_over(self, seconds: float) -> float:
        before = self._cpu()
        time.sleep(seconds)
        return (self._cpu() - before) / seconds

    def mark(self) -> None:
        self._mark = self._cpu(), time.monotonic()

    def cpu_share_since_mark(self) -> float:
        cpu, at = self._mark
        return (self._cpu() - cpu) / (time.monotonic() - at)


if __name__ == "__main__":
    main()
