"""The keeper (``manage.py keep``) on the local brokers: a stream of deaths into one kept
RabbitMQ place; then a thousand kept places on four brokers, idle, and then with letters dying
into them now and then.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/dlo_bench_keeper .venv/bin/python benchmarks/keeper.py

1. **Stream** (``--only stream``): an origin queue with ``x-message-ttl`` 0 dead-letters every
   message at once into its DLQ, which is kept in custody. This process publishes ``--rate``
   messages a second (default 2,000, 1 KiB, persistent, with confirms) for ``--stream-seconds``
   (default 60), each naming in its message id the moment it was sent, i.e. the moment it died.
   The keeper runs as its own process (DEBUG off, as in production). Printed: death-to-custody
   p50 / p95 / p99 / max (the letter's ``captured_at`` against its sending), the DLQ's depth each
   ten seconds, the keeper's resident memory each ten seconds with its reader processes, and its
   CPU. **Baseline** in the same run: the same publisher into a second DLQ read by a bare aio-pika
   consumer in this process (acknowledging each message on arrival, storing nothing), for
   ``--baseline-seconds`` (default 20): its death-to-arrival percentiles; the ratio of the
   console's p95 to it.
2. **Idle** (``--only idle``): ``--rabbitmq`` (700), ``--nats``, ``--redis`` and ``--activemq``
   (100 each) kept places (benchmarks/keeper_sites.py: made on each broker, found by the
   console's ``do_discover``, kept with ``do_keep``); once the keeper has taken them all up and
   ``--settle-seconds`` (10) have passed, nothing happens for ``--idle-seconds`` (300).
   Printed: the keeper's CPU over that time as a share of one core (with its reader processes)
   and its RSS every ten seconds.
3. **Trickle** (``--only trickle``): over the same places, ``--trickle`` letters a second
   (default 50) die, each into a place chosen at random among all of them, for ``--seconds``
   (300). Printed: the keeper's CPU share while they died (until the last is in custody), its
   RSS every ten seconds, and death to custody p50 / p95 / p99 / max for each broker kind and
   for all.

Idle and trickle share one keeper process (idle first). The run's broker objects are removed at
the end (ActiveMQ's queues only drained: STOMP cannot delete a queue), its places no longer
kept, and its letters deleted unless ``--keep-letters``.
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
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import broker_bench as bench  # noqa: E402
from benchmarks import harness  # noqa: E402
from benchmarks import keeper_sites as sites  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TICK = 0.01  # the publisher sends each tick's share, then sleeps to the next tick
KINDS = ("rabbitmq", "nats", "redis", "activemq")
DEFAULT_COUNTS = {"rabbitmq": 700, "nats": 100, "redis": 100, "activemq": 100}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", choices=["stream", "idle", "trickle"], action="append",
                        help="run this part (repeatable); all three by default")
    parser.add_argument("--rate", type=int, default=2000, help="stream: deaths a second into the one place")
    parser.add_argument("--stream-seconds", type=float, default=60)
    parser.add_argument("--baseline-seconds", type=float, default=20)
    for kind in KINDS:
        parser.add_argument(f"--{kind}", type=int, default=DEFAULT_COUNTS[kind], help=f"kept places on {kind}")
    parser.add_argument("--settle-seconds", type=float, default=10,
                        help="after the keeper took up the places, before anything is measured")
    parser.add_argument("--idle-seconds", type=float, default=300)
    parser.add_argument("--trickle", type=float, default=50, help="deaths a second over all the places")
    parser.add_argument("--seconds", type=float, default=300, help="trickle: how long letters die")
    parser.add_argument("--keep-letters", action="store_true")
    args = parser.parse_args()
    parts = set(args.only or ("stream", "idle", "trickle"))
    sys.stdout.reconfigure(line_buffering=True)  # progress shows as it comes, also into a file
    from console.malloc import give_back_large_blocks

    give_back_large_blocks()
    bench.setup_django()
    harness.vacuum_analyze()

    rabbit = bench.Rabbit()
    places: list = []
    made: list[sites.Site] = []
    try:
        if "stream" in parts:
            stream(rabbit, args, places)
        if parts & {"idle", "trickle"}:
            many_places(rabbit, args, parts, made, places)
    finally:
        sites.cleanup(made)
        rabbit.cleanup()
        unkeep(places)
        if not args.keep_letters:
            for place in places:
                harness.delete_letters(place)


# -- the parts ------------------------------------------------------------------------------------

def stream(rabbit: bench.Rabbit, args, kept: list) -> None:
    """``kept`` gets the run's place as soon as it is kept (unkept and emptied at the end)."""
    prefix = bench.unique_prefix("keeper")
    origin, dlq = dead_queue(rabbit, prefix)
    place = bench.add_broker_and_discover(prefix, dlq)
    kept.append(place)
    keep([place])

    base_origin, base_dlq = dead_queue(rabbit, f"{prefix}.baseline")
    print(f"\nbaseline: a bare consumer reading {base_dlq}, {args.rate:,} deaths/s for {args.baseline_seconds:.0f} s")
    baseline = bare_consumer_latencies(rabbit, base_origin, base_dlq, args.rate, args.baseline_seconds, prefix)
    print_latencies("bare consumer, death to arrival", baseline)

    print(f"\nstream: {args.rate:,} deaths/s into the kept {dlq} for {args.stream_seconds:.0f} s")
    with KeeperProcess() as keeper:
        keeper.wait_running([place])
        sent = publish_paced(rabbit, {0: origin}, args.rate, args.stream_seconds, prefix,
                             every_ten_seconds=lambda t: print(
                                 f"  {t:3.0f} s: DLQ depth {rabbit.depth(dlq):6,}; keeper {keeper.usage()}"))
        wait_in_custody([place], sent, rabbit, [dlq])
        print(f"  all {sent:,} letters in custody; keeper {keeper.usage()}")
        print(f"  keeper RSS by the time (s): {keeper.rss_line()}")
        keeper.let_go([place])  # the next parts' keeper has only their own places
    latencies = custody_latencies([place])
    print_latencies("kept place, death to custody", latencies)
    p95, base95 = harness.percentile(latencies, 95), harness.percentile(baseline, 95)
    print(f"  p95 {p95 * 1000:.0f} ms against the bare consumer's {base95 * 1000:.0f} ms: ratio {p95 / base95:.1f}")


def many_places(rabbit: bench.Rabbit, args, parts: set[str], made: list, kept: list) -> None:
    """``made`` gets each broker's site before its places are made, ``kept`` the places before
    they are kept: what a failed run leaves is cleaned up all the same."""
    counts = {kind: getattr(args, kind) for kind in KINDS}
    total = sum(counts.values())
    print(f"\nmany places: {total:,} kept places (" + ", ".join(f"{n:,} on {k}" for k, n in counts.items() if n) + ")")
    started = time.perf_counter()
    sites.make_sites(bench.unique_prefix("keeper-many"), counts, rabbit, made)
    places = [place for site in made for place in site.places]
    kept_at = time.perf_counter()
    kept += places
    keep(places)
    print(f"  {len(places):,} places kept in {time.perf_counter() - kept_at:.1f} s "
          f"(set-up {time.perf_counter() - started:.1f} s in all)", flush=True)
    with KeeperProcess() as keeper:
        taken_at = time.perf_counter()
        keeper.wait_running(places, timeout=300)
        print(f"  the keeper took up all {len(places):,} places in {time.perf_counter() - taken_at:.1f} s; "
              f"{keeper.usage()}", flush=True)
        time.sleep(args.settle_seconds)  # a reader may still be opening its subscriptions
        if "idle" in parts:
            idle(keeper, args, len(places))
        if "trickle" in parts:
            trickle(keeper, made, places, args)
        keeper.let_go(places)
    if "trickle" in parts:
        print_by_kind(places, made)


def idle(keeper: KeeperProcess, args, count: int) -> None:
    print(f"\nidle: {count:,} kept places, nothing dying, for {args.idle_seconds:.0f} s", flush=True)
    keeper.mark()
    window = keeper.window()
    time.sleep(args.idle_seconds)
    share = keeper.cpu_share_since_mark()
    print(f"  keeper idle: {share:.1%} of a core (with its readers); {keeper.usage()}")
    print(f"  keeper RSS every 10 s (MiB): {keeper.rss_line(window)}")
    print(f"  {keeper.rss_spread(window)}")


def trickle(keeper: KeeperProcess, made: list, places: list, args) -> None:
    print(f"\ntrickle: {args.trickle:g} deaths/s at random over {len(places):,} places for {args.seconds:.0f} s",
          flush=True)
    targets = [(site, index) for site in made for index in range(len(site.places))]
    chance = random.Random(7)
    keeper.mark()
    window = keeper.window()
    started, sent, report_at = time.monotonic(), 0, 10.0
    while (now := time.monotonic() - started) < args.seconds:
        for _ in range(max(0, int(now * args.trickle) + 1 - sent)):
            site, index = targets[chance.randrange(len(targets))]
            site.kill(index, sent)
            sent += 1
        if now >= report_at:
            report_at += 10
            print(f"  {now:3.0f} s: {sent:,} died; in custody {held_line(made)}; keeper {keeper.usage()}", flush=True)
        time.sleep(TICK)
    late = (time.monotonic() - started) - args.seconds
    print(f"  {time.monotonic() - started:3.0f} s: all {sent:,} died; in custody {held_line(made)}", flush=True)
    wait_in_custody(places, sent, None, [], sites=made)
    print(f"  {time.monotonic() - started:3.0f} s: all {sent:,} letters in custody "
          f"({late:.1f} s of dying ran over); keeper used "
          f"{keeper.cpu_share_since_mark():.1%} of a core from the first death to the last in custody; "
          f"{keeper.usage()}")
    print(f"  keeper RSS every 10 s (MiB): {keeper.rss_line(window)}")
    print(f"  {keeper.rss_spread(window)}")


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


def held_line(made: list) -> str:
    """Letters in custody against letters dead, per broker kind (are some falling behind?)."""
    from django.db.models import Count

    from console.models import DeadLetter

    places = [place for site in made for place in site.places]
    held = dict(DeadLetter.objects.filter(place__in=places).values_list("place__broker__kind")
                .annotate(n=Count("id")).values_list("place__broker__kind", "n"))
    return ", ".join(f"{site.kind} {held.get(site.kind, 0):,}/{site.sent:,}" for site in made)


def unkeep(places: list) -> None:
    """The run's places no longer kept, so the next run's keeper does not look for them."""
    from console.services.keeping import do_keep

    for place in places:
        do_keep(place, False, actor=bench.REQUESTER, reason="benchmark: done")


def wait_in_custody(places: list, sent: int, rabbit: bench.Rabbit | None, dlqs: list[str], timeout: float = 300,
                    *, sites: list | None = None) -> None:
    from console.models import DeadLetter

    deadline = time.monotonic() + timeout
    while DeadLetter.objects.filter(place__in=places).count() < sent:
        if time.monotonic() > deadline:
            held = DeadLetter.objects.filter(place__in=places).count()
            left = f"{sum(rabbit.depth(q) for q in dlqs):,} left on the broker" if rabbit else ""
            for site in sites or ():
                kept = DeadLetter.objects.filter(place__in=site.places).count()
                left += f"; {site.kind}: {kept:,} of {site.sent:,} in custody"
            raise SystemExit(f"only {held:,} of {sent:,} letters reached custody within {timeout:.0f} s; {left}")
        time.sleep(0.2)


def custody_latencies(places: list) -> list[float]:
    """Seconds from each letter's death (its sending, in its message id) to its ``captured_at``."""
    return [seconds for _, seconds in latencies_by_kind(places)]


def latencies_by_kind(places: list) -> list[tuple[str, float]]:
    """(broker kind, seconds from death to ``captured_at``) of each letter of ``places``; the
    death is in the message id or the header ``bench-died-ns`` (benchmarks.keeper_sites)."""
    from django.db.models.fields.json import KeyTextTransform

    from console.models import DeadLetter

    rows = (DeadLetter.objects.filter(place__in=places)
            .annotate(died=KeyTextTransform(sites.DIED_HEADER, "headers"))
            .values_list("place__broker__kind", "message_id", "died", "captured_at"))
    return [(kind, at.timestamp() - sites.died_ns(mid, died) / 1e9) for kind, mid, died, at in rows]


def print_by_kind(places: list, made: list) -> None:
    by_kind = defaultdict(list)
    for kind, seconds in latencies_by_kind(places):
        by_kind[kind].append(seconds)
    for site in made:
        print_latencies(f"{site.kind}, death to custody", by_kind[site.kind])
        if isinstance(site, sites.NatsSite) and site.term_gaps:
            print(f"    (NATS: the term came p50 {harness.percentile(site.term_gaps, 50) * 1000:.0f} / "
                  f"p95 {harness.percentile(site.term_gaps, 95) * 1000:.0f} ms after the publish that stamped "
                  "the death: counted in the latencies above)")
    print_latencies("all kinds, death to custody", [s for values in by_kind.values() for s in values])


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
        (ROOT / "var").mkdir(exist_ok=True)  # a fresh checkout has none
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

    def let_go(self, places: list, timeout: float = 120) -> None:
        """Keeping turned off while the keeper runs, so it ends their keep jobs itself (a keeper
        stopped first would leave them running in the database for the next run's keeper)."""
        from console.models import Job

        unkeep(places)
        deadline = time.monotonic() + timeout
        while Job.objects.filter(kind="keep", place__in=places).exclude(status__in=Job.FINISHED).exists():
            if self.process.poll() is not None or time.monotonic() > deadline:
                print(f"  the keeper did not end the keep jobs within {timeout:.0f} s; see {self.log.name}")
                return
            time.sleep(0.2)

    def _pids(self) -> list[int]:
        """The keeper and its descendants, started from any of its threads (each thread's
        ``children`` lists only the processes that thread started)."""
        found, queue = [], [self.process.pid]
        while queue:
            pid = queue.pop()
            found.append(pid)
            for children in Path(f"/proc/{pid}/task").glob("*/children"):
                try:
                    queue += [int(child) for child in children.read_text().split()]
                except OSError:
                    continue
        return found

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

    def window(self) -> int:
        """Where the RSS samples of a stretch of the run begin (for ``rss_line``/``rss_spread``)."""
        return len(self.rss)

    def rss_line(self, since: int = 0) -> str:
        """The RSS samples (one a second) every ten seconds, as ``time: MiB``."""
        return ", ".join(f"{t:.0f}: {mib:.0f}" for t, mib in self.rss[since::10])

    def rss_spread(self, since: int = 0) -> str:
        """Whether memory stayed flat: first, last, lowest and highest of the samples."""
        values = [mib for _, mib in self.rss[since:]]
        if not values:
            return "no RSS samples"
        return (f"RSS first {values[0]:.0f}, last {values[-1]:.0f}, lowest {min(values):.0f}, "
                f"highest {max(values):.0f} MiB (growth last - first {values[-1] - values[0]:+.0f} MiB)")

    def mark(self) -> None:
        self._mark = self._cpu(), time.monotonic()

    def cpu_share_since_mark(self) -> float:
        cpu, at = self._mark
        return (self._cpu() - cpu) / (time.monotonic() - at)


if __name__ == "__main__":
    main()
