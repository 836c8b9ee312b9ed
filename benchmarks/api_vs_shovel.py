"""Capture and replay as a user runs them, through the REST API with a real Celery worker,
against RabbitMQ's own shovel on the same broker, interleaved run by run.

    .venv/bin/python benchmarks/api_vs_shovel.py                       # 5 runs at 20,000 and 100,000
    .venv/bin/python benchmarks/api_vs_shovel.py --sizes 20000 --runs 3
    .venv/bin/python benchmarks/api_vs_shovel.py --project /tmp/before  # the same, for another checkout
    .venv/bin/python benchmarks/api_vs_shovel.py --held 1000000         # as a console in use: custody kept

The console is started the way ``make run`` starts it: gunicorn (one process) on 127.0.0.1 and
``celery -A console worker`` (its default pool), both on Redis (``--redis``, database 9 by
default) and on the database ``--database-url`` (default dlo_bench20, created and migrated with
the checkout's own ``manage.py``). The benchmark itself talks HTTP to the console (tokens of
three users: an admin who adds the broker and discovers it, an operator who asks for the jobs,
a second operator who approves them), AMQP and the management API to RabbitMQ
(benchmarks/broker_bench.Rabbit), and reads ``/proc`` for CPU. It never imports the console,
so ``--project`` can measure an older checkout with this same script.

Each run of a size, in turn:

1. the shovels, two baselines: the plain shovel (broker_bench.shovel_baseline), N persistent
   1 KiB messages moved between two queues, and the dead-letter shovel
   (broker_bench.dead_letter_shovel_baseline), N dead letters like the run's own (x-death and
   the same headers) moved out of their DLQ: what an operator would do instead of using the
   console. Each is timed from the shovel's creation until its destination holds N (a passive
   declare). Ratios are against the dead-letter shovel;
2. N messages published to an origin queue whose dead-letter exchange routes to its DLQ, each
   expiring at once (``expiration`` 0: a real ``x-death``, reason ``expired``); not timed;
3. the capture: ``POST /api/places/{id}/capture/``, approved by the second operator
   (``POST /api/jobs/{id}/approve/``), then ``GET /api/jobs/{id}/`` every ``--poll`` seconds
   (0.1) until it has finished; timed from the approval's answer to the poll that sees it
   finished (each look costs the web process and PostgreSQL a few milliseconds of the two
   cores the job runs on, so looking far more often slows the job it times). It must have
   taken N letters and left the DLQ empty;
4. the two shovels again;
5. the replay of those letters to their origin: ``POST /api/jobs/`` (action replay, filter: the
   place, held), approved and polled the same way. The origin queue must then hold exactly N
   (it has no consumer, and RabbitMQ drops ``expiration`` when it dead-letters a message).

Between steps the benchmark waits until the worker and PostgreSQL are quiet (whatever a job
left to do after it finished is done and measured as "after" CPU, not counted in the rate),
and after each run it deletes the run's letters and queues and vacuums, so every run starts
from the same database. With ``--held N`` it lives as a console in use instead: before the runs
the database is seeded with N letters in four other places (benchmarks/seed_letters.py, skipped
when they are there), every run's letters are kept (only ``VACUUM ANALYZE`` after each run, as
autovacuum would do after that many changes: this machine's PostgreSQL runs without it), and
sizes are interleaved run by run (20,000, 100,000, 20,000, ...), so custody grows as it would.

CPU per letter is read from ``/proc/<pid>/stat`` (user + system) over each job, from its
approval until it finished: the worker's processes, their children (a capture's reader
process, a replay's publisher processes; their time once they exit), all of PostgreSQL's
processes and RabbitMQ's (beam.smp).

It prints each run, then per size and kind the median and lowest ratio (job rate / shovel
rate of the dead-letter shovel run just before it) against issue 32's targets (median >= 0.5, lowest
>= 0.45), and the median CPU µs per letter of each process.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import broker_bench as bench  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TICK = os.sysconf("SC_CLK_TCK")
#: The worker's children: a capture's reader, a replay's publisher.
CHILDREN = (b"console.brokers.capture_process", b"console.brokers.publish_process")
MEDIAN_TARGET, LOWEST_TARGET = 0.5, 0.45
#: Headers of the runs' dead letters, and of the dead-letter shovel's.
HEADERS = {"x-exception-fqcn": "java.lang.IllegalStateException", "x-exception-message": "Order is already closed"}
HELD_PLACES = 4


# -- processes and their CPU ---------------------------------------------------------------------

def _stat(pid: int) -> tuple[int, str, list[str]] | None:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            head, tail = stat.read().rsplit(")", 1)
    except OSError:
        return None
    fields = tail.split()
    return int(fields[1]), head.split("(", 1)[1], fields  # parent, command name, the rest


def _processes() -> dict[int, tuple[int, str, list[str]]]:
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit() and (stat := _stat(int(entry))) is not None:
            found[int(entry)] = stat
    return found


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return cmdline.read()
    except OSError:
        return b""


def cpu_seconds(worker_pid: int) -> dict[str, float]:
    """CPU seconds so far (user + system) of the worker's processes, its children (a capture's
    reader, a replay's publisher: the live ones, and those that exited, through their parents'
    counts of reaped children),
    PostgreSQL's processes (the server's count of reaped backends included) and RabbitMQ."""
    table = _processes()
    tree, pending = set(), [worker_pid]
    while pending:
        pid = pending.pop()
        tree.add(pid)
        pending.extend(child for child, (parent, _, _) in table.items() if parent == pid and child not in tree)
    ticks = {"worker": 0, "child": 0, "postgres": 0, "rabbitmq": 0}
    for pid, (_, name, fields) in table.items():
        own, reaped = int(fields[11]) + int(fields[12]), int(fields[13]) + int(fields[14])
        if pid in tree:
            if any(module in _cmdline(pid) for module in CHILDREN):
                ticks["child"] += own
            else:
                ticks["worker"] += own
                if pid != worker_pid:  # the pool's processes reap the children they started
                    ticks["child"] += reaped
        elif name == "postgres":
            ticks["postgres"] += own + reaped
        elif name == "beam.smp":
            ticks["rabbitmq"] += own
    return {kind: count / TICK for kind, count in ticks.items()}


def quiet(worker_pid: int, *, seconds: float = 0.5, busy: float = 0.05, timeout: float = 600) -> float:
    """Wait until the worker and PostgreSQL use less than ``busy`` of a core over ``seconds``;
    returns how long it took."""
    started = time.monotonic()
    last = cpu_seconds(worker_pid)
    while time.monotonic() - started < timeout:
        time.sleep(seconds)
        now = cpu_seconds(worker_pid)
        used = sum(now[k] - last[k] for k in ("worker", "child", "postgres"))
        last = now
        if used < busy * seconds:
            return time.monotonic() - started
    raise SystemExit(f"the worker and PostgreSQL were still busy after {timeout:.0f} s")


# -- the console, started from a checkout --------------------------------------------------------

class Console:
    """gunicorn and a Celery worker from ``project``, on ``database_url`` and Redis."""

    def __init__(self, project: Path, database_url: str, redis_url: str, port: int, log: Path,
                 poll: float = 0.1) -> None:
        import httpx

        self.poll = poll
        self.project = project
        self.python = sys.executable
        self.env = {**os.environ, "DATABASE_URL": database_url, "CELERY_BROKER_URL": redis_url,
                    "DEBUG": "false", "SECRET_KEY": "benchmark-only-secret-key",
                    "ALLOWED_HOSTS": "127.0.0.1,localhost", "SECURE_COOKIES": "false",
                    "LOG_LEVEL": "WARNING", "DJANGO_SETTINGS_MODULE": "console.settings"}
        self.base = f"http://127.0.0.1:{port}"
        self.log = log
        self.processes: list[subprocess.Popen] = []
        bench_harness_create_database(database_url)
        self.manage("migrate", "--verbosity", "0")
        self.tokens = json.loads(self.manage("shell", "-c", USERS).strip().splitlines()[-1])
        self.http = httpx.Client(base_url=self.base, timeout=60)

    def manage(self, *args: str) -> str:
        return subprocess.run([self.python, "manage.py", *args], cwd=self.project, env=self.env, check=True,
                              capture_output=True, text=True).stdout

    def start(self) -> int:
        out = self.log.open("a")
        gunicorn = [self.python, "-m", "gunicorn", "console.wsgi", "--bind", self.base.removeprefix("http://"),
                    "--workers", "1", "--timeout", "120"]
        worker = [self.python, "-m", "celery", "-A", "console", "worker", "-l", "warning",
                  "--without-gossip", "--without-mingle", "--without-heartbeat"]
        for command in (gunicorn, worker):
            self.processes.append(subprocess.Popen(command, cwd=self.project, env=self.env, stdout=out,
                                                   stderr=subprocess.STDOUT))
        deadline = time.monotonic() + 60
        while True:
            try:
                if self.http.get("/").status_code < 500:
                    break
            except Exception:
                pass
            if time.monotonic() > deadline:
                raise SystemExit(f"the console did not answer on {self.base}; see {self.log}")
            time.sleep(0.3)
        time.sleep(3)  # the worker's pool is up
        return self.processes[1].pid

    def stop(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()

    def call(self, who: str, method: str, path: str, body: dict | None = None, expect=(200, 201, 202)) -> dict:
        response = self.http.request(method, path, json=body, headers={"Authorization": f"Token {self.tokens[who]}"})
        if response.status_code not in expect:
            raise SystemExit(f"{method} {path} answered {response.status_code}: {response.text[:500]}")
        return response.json()

    def run_job(self, job: dict, worker_pid: int, count: int) -> dict:
        """Approve ``job`` if it waits, then poll it until it has finished: wall seconds and
        CPU seconds of each process from the approval to the end."""
        if job["status"] == "awaiting_approval":
            self.call("approver", "POST", f"/api/jobs/{job['id']}/approve/", {"reason": "benchmark"})
        started, before = time.perf_counter(), cpu_seconds(worker_pid)
        while True:
            job = self.call("operator", "GET", f"/api/jobs/{job['id']}/")
            if job["finished_at"]:
                break
            time.sleep(self.poll)
        seconds, after = time.perf_counter() - started, cpu_seconds(worker_pid)
        ran = (_parse(job["finished_at"]) - _parse(job["started_at"])).total_seconds()
        if job["status"] != "succeeded" or job["done"] != count:
            raise SystemExit(f"job {job['id']} {job['status']}, done {job['done']} of {count}: {job['error']}")
        settled = quiet(worker_pid)
        later = cpu_seconds(worker_pid)
        return {"seconds": seconds, "rate": count / seconds, "settle_seconds": settled, "ran_seconds": ran,
                "cpu_us": {k: (after[k] - before[k]) / count * 1e6 for k in after},
                "after_cpu_us": {k: (later[k] - after[k]) / count * 1e6 for k in later}}


def _parse(stamp: str):
    from datetime import datetime

    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def bench_harness_create_database(url: str) -> None:
    from benchmarks.harness import create_database

    create_database(url)


#: Run by ``manage.py shell -c`` in the checkout: the benchmark's users, roles and API tokens.
USERS = """
import json
from django.contrib.auth import get_user_model
from rest_framework.authtoken.models import Token
from console.access.roles import set_role
tokens = {}
for who, role in (("admin", "admin"), ("operator", "operator"), ("approver", "operator")):
    user, _ = get_user_model().objects.get_or_create(username=f"bench-{who}")
    set_role(user, role)
    tokens[who] = Token.objects.get_or_create(user=user)[0].key
print(json.dumps(tokens))
"""

#: Run by ``manage.py shell -c``: {count} letters in HELD_PLACES places of their own, then vacuumed.
HOLD = """
from benchmarks.harness import seeded_place, vacuum_analyze
for number in range({places}):
    seeded_place(f"held-{{number}}.dlq", {count} // {places}, samples=False)
vacuum_analyze()
"""

#: Run by ``manage.py shell -c``: a run's letters deleted (benchmarks/harness.py), then vacuumed.
FORGET = """
from console.models import DeadPlace
from benchmarks.harness import delete_letters, vacuum_analyze
delete_letters(DeadPlace.objects.get(pk={place}))
vacuum_analyze()
"""


#: Run by ``manage.py shell -c`` after a run whose letters are kept.
VACUUM = """
from benchmarks.harness import vacuum_analyze
vacuum_analyze()
"""


# -- the runs ------------------------------------------------------------------------------------

@dataclass
class Run:
    size: int
    kind: str
    rate: float
    shovel: float  # the dead-letter shovel
    plain: float  # the plain shovel
    cpu_us: dict
    after_cpu_us: dict
    extra: dict = field(default_factory=dict)

    @property
    def ratio(self) -> float:
        return self.rate / self.shovel


def baselines(rabbit: bench.Rabbit, prefix: str, size: int) -> tuple[float, float]:
    """The plain shovel's rate and the dead-letter shovel's, one after the other."""
    plain = bench.shovel_baseline(rabbit, prefix, size)
    _drop_shovel_queues(rabbit, prefix)
    dead = bench.dead_letter_shovel_baseline(rabbit, prefix, size, HEADERS)
    return plain["rate"], dead["rate"]


def one_round(console: Console, rabbit: bench.Rabbit, worker_pid: int, size: int, number: int,
              keep: bool = False) -> list[Run]:
    prefix = bench.unique_prefix(f"api{number}")
    origin, dlq = f"{prefix}.orders", f"{prefix}.orders.dlq"
    rabbit.declare(dlq)
    rabbit.declare(origin, {"x-dead-letter-exchange": "", "x-dead-letter-routing-key": dlq})
    broker = console.call("admin", "POST", "/api/brokers/", {
        "name": prefix.replace(".", "-"), "kind": "rabbitmq", "url": bench.AMQP_URL,
        "management_url": bench.MANAGEMENT_URL})
    runs = []
    try:
        quiet(worker_pid)
        plain, dead = baselines(rabbit, f"{prefix}.a", size)

        rabbit.publish(origin, size, prefix=prefix, expiration=0, headers=HEADERS)
        rabbit.wait_depth(dlq, size)
        place = _discover(console, broker["id"], dlq)
        quiet(worker_pid)
        job = console.call("operator", "POST", f"/api/places/{place}/capture/", {"reason": "benchmark: capture"})
        capture = console.run_job(job, worker_pid, size)
        if rabbit.depth(dlq) != 0:
            raise SystemExit(f"the capture left {rabbit.depth(dlq)} messages in {dlq}")
        runs.append(Run(size, "capture", capture["rate"], dead, plain, capture["cpu_us"], capture["after_cpu_us"]))
        print(_line(runs[-1], capture), flush=True)

        plain, dead = baselines(rabbit, f"{prefix}.b", size)
        quiet(worker_pid)
        job = console.call("operator", "POST", "/api/jobs/", {
            "action": "replay", "reason": "benchmark: replay", "filter": {"place": place, "state": "held"}})
        replay = console.run_job(job, worker_pid, size)
        if rabbit.depth(origin) != size:
            raise SystemExit(f"the replay left {rabbit.depth(origin)} messages in {origin}, not {size}")
        runs.append(Run(size, "replay", replay["rate"], dead, plain, replay["cpu_us"], replay["after_cpu_us"]))
        print(_line(runs[-1], replay), flush=True)
        console.manage("shell", "-c", (VACUUM if keep else FORGET).format(place=place))
    finally:
        for name in (origin, dlq):
            try:
                rabbit.purge(name)
            except Exception:
                pass
    return runs


def _drop_shovel_queues(rabbit: bench.Rabbit, prefix: str) -> None:
    for name in (f"{prefix}.shovel.src", f"{prefix}.shovel.dest"):
        rabbit.purge(name)


def _discover(console: Console, broker: int, name: str) -> int:
    deadline = time.monotonic() + 30
    while True:
        places = console.call("admin", "POST", f"/api/brokers/{broker}/discover/", {"reason": "benchmark"})
        for place in places if isinstance(places, list) else places.get("places", []):
            if place["name"] == name:
                return place["id"]
        if time.monotonic() > deadline:
            raise SystemExit(f"discovery did not find {name}")
        time.sleep(1)


def _line(run: Run, measured: dict) -> str:
    cpu = " ".join(f"{k} {v:.0f}" for k, v in run.cpu_us.items())
    after = sum(run.after_cpu_us[k] for k in ("worker", "child", "postgres"))
    return (f"  {run.size:>7,} {run.kind:<7} {run.rate:7,.0f} letters/s  dead-letter shovel {run.shovel:7,.0f} "
            f"msg/s (plain {run.plain:7,.0f})  "
            f"ratio {run.ratio:.2f}   {run.size / run.rate:.2f} s, {measured['ran_seconds']:.2f} s of it in the "
            f"worker   CPU µs/letter: {cpu}   after the job: {after:.0f} µs/letter "
            f"({measured['settle_seconds']:.1f} s)")


def summary(runs: list[Run]) -> None:
    print("\nsize     kind     runs  median ratio  lowest   targets (median >= 0.5, lowest >= 0.45)   "
          "median CPU µs/letter (worker / its child / postgres / rabbitmq; after the job)")
    for size in sorted({r.size for r in runs}):
        for kind in ("capture", "replay"):
            chosen = [r for r in runs if r.size == size and r.kind == kind]
            if not chosen:
                continue
            ratios = [r.ratio for r in chosen]
            median, lowest = statistics.median(ratios), min(ratios)
            met = "met" if median >= MEDIAN_TARGET and lowest >= LOWEST_TARGET else "NOT met"
            cpu = " / ".join(f"{statistics.median(r.cpu_us[k] for r in chosen):.0f}"
                             for k in ("worker", "child", "postgres", "rabbitmq"))
            after = statistics.median(sum(r.after_cpu_us[k] for k in ("worker", "child", "postgres")) for r in chosen)
            print(f"{size:>7,}  {kind:<7}  {len(chosen):>4}  {median:12.2f}  {lowest:6.2f}   {met:<42} "
                  f"{cpu}; {after:.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[20_000, 100_000])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--project", type=Path, default=ROOT, help="the checkout whose console is measured")
    parser.add_argument("--database-url", default="postgres://postgres@127.0.0.1:5432/dlo_bench20")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/9")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--poll", type=float, default=0.1, help="seconds between two looks at a running job")
    parser.add_argument("--held", type=int, default=0,
                        help="letters held in other places before the runs; every run's letters are then kept")
    args = parser.parse_args()
    if args.project != ROOT and not (args.project / "benchmarks" / "harness.py").exists():
        raise SystemExit(f"{args.project} has no benchmarks/harness.py (copy this checkout's benchmarks/ there)")
    log = Path("/tmp") / f"api_vs_shovel.{os.getpid()}.log"
    console = Console(args.project.resolve(), args.database_url, args.redis, args.port, log, poll=args.poll)
    rabbit = bench.Rabbit()
    if args.held:
        started = time.perf_counter()
        console.manage("shell", "-c", HOLD.format(count=args.held, places=HELD_PLACES))
        print(f"{args.held:,} letters held in {HELD_PLACES} other places ({time.perf_counter() - started:.0f} s)",
              flush=True)
    worker = console.start()
    print(f"console from {args.project.resolve()} (commit {_commit(args.project)}) on {console.base}, "
          f"worker pid {worker}; its log {log}", flush=True)
    runs: list[Run] = []
    try:
        for number in range(1, args.runs + 1):
            for size in args.sizes:
                runs.extend(one_round(console, rabbit, worker, size, number, keep=bool(args.held)))
    finally:
        console.stop()
        rabbit.cleanup()
        if runs:
            summary(runs)


def _commit(project: Path) -> str:
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=project, capture_output=True,
                          text=True).stdout.strip()


if __name__ == "__main__":
    main()
