"""What the Redis reader costs while its places are idle, and while letters trickle in: one
reader follows ``--places`` dead places (half consumer groups, half dead streams, over one
connection) and takes for
``--seconds``, half a second a take as the keeper's reading thread does. Printed (no assertion:
figures go to benchmarks/README.md): the process's CPU over that stretch, and the commands
Redis ran meanwhile by name (INFO commandstats, before and after) and the server's CPU (INFO cpu).

    .venv/bin/python benchmarks/redis_reader_idle.py                       # --places 100 --seconds 30
    .venv/bin/python benchmarks/redis_reader_idle.py --url redis://127.0.0.1:6390/0
    .venv/bin/python benchmarks/redis_reader_idle.py --session-reader     # the fallback, to compare
    .venv/bin/python benchmarks/redis_reader_idle.py --rate 20            # 20 letters a second, spread

With ``--rate``, a child process (its CPU not counted, its commands left out of the figures)
makes that many letters a second, each in a random place, stamped when added; the added-to-taken
delay's median, p95 and max are printed too (a group's letter is added, then delivered four
times by its worker within a few milliseconds, all inside the delay).

commandstats and the server's CPU count every client of the server: on a Redis others use too, their commands are
in the figures; point ``--url`` at a Redis of your own for the reader's alone. The keys made
are deleted afterwards.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import redis
from redis.typing import EncodableT, FieldT

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from console.brokers.base import BrokerConfig, PlaceRef  # noqa: E402
from console.brokers.readers import SessionReader  # noqa: E402
from console.brokers.redis.adapter import RedisStreamsAdapter  # noqa: E402

URL = os.environ.get("DLO_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
SENT_AT = "dlobench-sent-at"


def command_counts(client: redis.Redis) -> dict[str, int]:
    return {name.removeprefix("cmdstat_"): int(stats["calls"])
            for name, stats in client.info("commandstats").items()}


def kill(url: str, places: list[PlaceRef], rate: float, seconds: float, in_groups: Any) -> None:
    """The child: ``rate`` letters a second, each into a random place, stamped when added: a dead
    stream gets the entry as the common pattern writes it; a group's worker reads the entry and
    fails it three more times (XCLAIM), so it is delivered four times, over the threshold."""
    client = redis.Redis.from_url(url)
    started = time.monotonic()
    for n in range(int(rate * seconds)):
        time.sleep(max(0.0, started + n / rate - time.monotonic()))
        place = random.choice(places)
        stamp: dict[FieldT, EncodableT] = {"body": b"x" * 1024, SENT_AT: repr(time.time())}
        if not place.scope:
            client.xadd(place.name, stamp)
            continue
        in_groups.value += 1
        entry_id = client.xadd(place.scope, stamp)
        client.xreadgroup(place.name, "worker", {place.scope: ">"})
        for _ in range(3):
            client.xclaim(place.scope, place.name, "worker", 0, [entry_id])  # counts a delivery
    client.close()


def server_cpu(client: redis.Redis) -> float:
    info = client.info("cpu")
    return float(info["used_cpu_sys"]) + float(info["used_cpu_user"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", default=URL)
    parser.add_argument("--places", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--per-place", type=int, default=10)
    parser.add_argument("--session-reader", action="store_true",
                        help="the fallback reader instead (depths every 0.5 s), for comparison")
    parser.add_argument("--rate", type=float, default=0.0, help="letters a second, spread over the places")
    args = parser.parse_args()

    suffix = uuid.uuid4().hex[:10]
    delays: list[float] = []
    in_groups = multiprocessing.Value("i", 0)  # letters the child made in groups: 3 XCLAIMs each
    client = redis.Redis.from_url(args.url)
    places: list[PlaceRef] = []
    for i in range(args.places):
        stream = f"dlo-bench:orders{i}:{suffix}"
        if i % 2:
            client.xgroup_create(stream, "billing", id="$", mkstream=True)
            places.append(PlaceRef("billing", scope=stream))
        else:
            client.xgroup_create(f"{stream}:dlq", "dlq-readers", id="$", mkstream=True)
            places.append(PlaceRef(f"{stream}:dlq"))
    adapter = RedisStreamsAdapter(BrokerConfig(kind="redis", url=args.url, options={"min_idle_ms": 0}))
    reader = (SessionReader(adapter, per_place=args.per_place) if args.session_reader
              else adapter.open_reader(per_place=args.per_place))
    try:
        assert reader.follow(places) == {}
        reader.take(100, wait_seconds=0.5)  # the first look, outside the figures
        before, cpu, started = command_counts(client), time.process_time(), time.monotonic()
        server = server_cpu(client)
        child = None
        if args.rate:
            child = multiprocessing.Process(target=kill, args=(args.url, places, args.rate, args.seconds, in_groups))
            child.start()
        while time.monotonic() - started < args.seconds:
            for place, messages in reader.take(100, wait_seconds=0.5).items():
                taken_at = time.time()
                delays.extend(taken_at - float(m.headers[SENT_AT]) for m in messages if SENT_AT in m.headers)
                reader.ack(place, messages)
        if child is not None:
            child.join()
        cpu, wall = time.process_time() - cpu, time.monotonic() - started
        after, server = command_counts(client), server_cpu(client) - server
    finally:
        reader.close()
        adapter.close()
        keys = list(client.scan_iter(match=f"dlo-bench:*{suffix}*", count=1000))
        if keys:
            client.delete(*keys)
    ran = {name: after[name] - before.get(name, 0) for name in after if after[name] != before.get(name, 0)}
    for mine in ("info", "xadd", "xreadgroup", "hello"):  # our own INFO calls, and the child's
        ran.pop(mine, None)
    ran["xclaim"] = ran.get("xclaim", 0) - 3 * in_groups.value  # the reader's own remain
    if not ran["xclaim"]:
        del ran["xclaim"]
    groups = sum(1 for place in places if place.scope)
    print(f"{type(reader).__name__}: {args.places} places ({groups} groups, {args.places - groups} dead streams), "
          f"{args.rate:g} letters a second for {wall:.1f} s, per_place {args.per_place}")
    print(f"reader CPU: {cpu:.2f} s = {100 * cpu / wall:.2f}% of a core")
    if delays:
        delays.sort()
        print(f"added to taken: {len(delays)} letters, median {1000 * statistics.median(delays):.0f} ms, "
              f"p95 {1000 * delays[int(0.95 * (len(delays) - 1))]:.0f} ms, max {1000 * delays[-1]:.0f} ms")
    print(f"Redis server CPU (all its clients): {server:.2f} s = {100 * server / wall:.2f}% of a core")
    total = sum(ran.values())
    print(f"Redis commands: {total} ({total / wall:.1f}/s): "
          + ", ".join(f"{name} {count}" for name, count in sorted(ran.items(), key=lambda kv: -kv[1])))


if __name__ == "__main__":
    main()
