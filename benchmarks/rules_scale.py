"""Handling rules with many held letters (issue 29): ten enabled rules, one per match kind, most
matching little; the dry run of each, a round of the rules with nothing new, a round after
2,000 letters arrive, and the CPU a steady period of rounds costs.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/dlo_bench_rules1m .venv/bin/python benchmarks/rules_scale.py
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/dlo_bench_rules100k .venv/bin/python benchmarks/rules_scale.py \\
        --letters 100000

Options: ``--letters N`` (held letters in ``orders.dlq``, default 1,000,000, seeded by COPY with
benchmarks/seed_letters.py unless the place holds that many), ``--repeat R`` (dry runs per
rule, default 5), ``--steady-seconds S`` (the steady period, default 300: a round every
DLO_RULES_SECONDS as beat runs them), ``--arrivals K`` (times 2,000 new letters arrive, default
3), ``--skip-rounds`` (dry runs only), ``--probes`` (also dry runs of draft body paths on values
many letters hold, and behind a list index), ``--wide`` (also dry runs of drafts matching most of
the letters, against deciding each of their letters in Python), ``--after-rounds`` (the dry runs
once the rounds have decided what is held, as on a console in use: the earlier rules are then
asked only about what is left to decide; without it, every held letter waits in the rules'
inbox, as just after a rule set changed).

What is measured is whatever the code is: ``console.services.rules.dry_run`` and
``console.jobs.automation.rules_at_work.apply_rules``, called in this process as a worker calls them. The rules
are made and enabled through the services an admin's request goes through (their enabling runs
a dry run, timed too). Before the rounds are timed, the rounds that decide what is already held
(after enabling, every held letter is to be decided once) run until nothing is left to decide;
their time is printed. New letters arrive in a place of their own, ``orders.arrivals``, emptied
at the start of each run, so ``orders.dlq`` stays as seeded.

The baseline, measured in the same run: the body-path match as it was before issue 29 (every
body in the rule's scope read into Python and parsed there), over the same letters.

CPU is this process's (the worker's) user + system time over the steady period, and the
PostgreSQL backend's serving it (from /proc), each as a share of one core. The machine's load
average is printed beside the figures.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import (
    call_timings,
    delete_letters,
    percentile,
    seeded_place,
    setup_django,
    vacuum_analyze,
)

#: Issue 29's targets.
STEADY_ROUND_MS = 100
ARRIVAL_ROUND_MS = 1000
CPU_SHARE = 0.05
DRY_RUN_MS = 3000
ARRIVALS = 2000


def rules_of(one_letter: dict) -> list[tuple[str, dict, dict]]:
    """(name, match, action): one rule per match kind. Two take one held letter each (a trace id,
    an order number); the others take none of what is held (the steady state: held letters
    wait for a person); arrivals bring a few for the header and body-path rules."""
    hold = {"kind": "hold"}
    return [
        ("bench header", {"header": {"name": "trace-id", "value": one_letter["trace_id"]}}, hold),
        ("bench body path", {"body_path": {"path": "$.order_id", "value": one_letter["order_id"]}}, hold),
        ("bench exception regex", {"exception_type": r"^java\.io\.EOFException$"}, hold),
        ("bench exception message", {"exception_message": r"currency 9[0-9]{2} is not"}, hold),
        ("bench origin", {"origin": "orders.returns"}, hold),
        ("bench reason", {"reason": "poison_ack"}, hold),
        ("bench deaths", {"min_deaths": 6}, hold),
        ("bench replays", {"min_replays": 1}, hold),
        ("bench age", {"older_than_seconds": 40 * 86400}, hold),
        ("bench size", {"max_size": 40}, hold),
    ]


def body_path_probes(one_letter: dict) -> list[tuple[str, dict]]:
    """Body paths on values many letters hold, or behind a list index, dry-run as drafts after
    the ten rules (``--probes``): what a person trying a rule out would type."""
    return [
        ("a rare string ($.customer.id)", {"body_path": {"path": "$.customer.id", "value": "c-4242"}}),
        ("a common string ($.currency, CHF)", {"body_path": {"path": "$.currency", "value": "CHF"}}),
        ("a third of the letters ($.customer.tier)", {"body_path": {"path": "$.customer.tier", "value": "gold"}}),
        ("a number as a string ($.order_id)",
         {"body_path": {"path": "$.order_id", "value": str(one_letter["order_id"])}}),
        ("an int behind an index ($.lines[0].qty)", {"body_path": {"path": "$.lines[0].qty", "value": 4}}),
    ]


def wide_drafts(admin, place, repeat: int) -> None:
    """Drafts that match much of what is held (issue 50), dry-run after the ten rules; beside
    each, the baseline measured in the same run: the same draft's letters decided one by one in
    Python (console.services.rules.deciding.decide, as the dry run did before issue 50 and as a
    round still does for the few letters it decides)."""
    from console.access.scope import visible
    from console.models import Rule
    from console.services.rules import dry_run, enabled_rules, open_letters
    from console.services.rules.deciding import decide
    from console.services.rules.matching import matching

    retry = {"kind": "retry", "ladder": [{"tries": 3, "delay_seconds": 60}], "then": "hold"}
    one = one_letter(place)
    drafts = [("nearly every letter (exception_type .), hold", {"exception_type": "."}, {"kind": "hold"}),
              ("nearly every letter (exception_type .), retry", {"exception_type": "."}, retry),
              *[(f"{name}, retry", match, retry) for name, match in body_path_probes(one)[1:3]]]
    print(f"\nWide drafts ({repeat} dry runs each after one warm-up; ms) against deciding each letter in Python",
          flush=True)
    print(f"{'draft':48s} {'matched':>8s} {'p50':>8s} {'p95':>8s} {'python':>8s} {'ratio':>6s}")
    for name, match, action in drafts:
        draft = Rule(name=name, match=match, action=action, position=10_000)
        answer = dry_run(draft, reader=admin)
        times = call_timings(lambda draft=draft: dry_run(draft, reader=admin), repeat)
        started = time.perf_counter()
        letters = visible(admin, open_letters())
        decide([*enabled_rules(), draft], letters.filter(pk__any=set(matching(draft, letters))))
        python_ms = (time.perf_counter() - started) * 1000
        p95 = percentile(times, 95) * 1000
        print(f"{name:48s} {answer.matched:8d} {percentile(times, 50) * 1000:8.0f} {p95:8.0f} {python_ms:8.0f} "
              f"{p95 / python_ms:6.3f}; {load()}", flush=True)


def python_body_path(place, path: str, wanted) -> int:
    """The body path as it was matched before issue 29: each body read and parsed in Python."""
    from console.letters import bounded_json
    from console.models import DeadLetter
    from console.services.rules import open_letters, path_steps

    steps = path_steps(path)

    def at_path(body: bytes) -> bool:
        try:
            value = bounded_json.loads(body)
        except (ValueError, RecursionError):
            return False
        for step in steps:
            if isinstance(step, int) and isinstance(value, list) and -len(value) <= step < len(value):
                value = value[step]
            elif isinstance(value, dict) and str(step) in value:
                value = value[str(step)]
            else:
                return False
        return value == wanted or (isinstance(wanted, str) and not isinstance(value, (dict, list))
                                   and str(value) == wanted)

    letters = open_letters(DeadLetter.objects.filter(place=place)).order_by("id").values_list("id", "body")
    return sum(1 for _, body in letters.iterator(chunk_size=500) if at_path(bytes(body)))


def one_letter(place) -> dict:
    import json

    from console.models import DeadLetter

    letters = DeadLetter.objects.filter(place=place).order_by("id")
    letter = letters.defer("body")[letters.count() // 2]
    body = json.loads(bytes(DeadLetter.objects.values_list("body", flat=True).get(pk=letter.pk)))
    return {"trace_id": letter.headers["trace-id"], "order_id": body["order_id"]}


def enabled(admin, place) -> list:
    """The ten rules, made and enabled (or found from an earlier run), in their order."""
    from console.models import Rule
    from console.services.rules import do_create_rule

    made = []
    for position, (name, match, action) in enumerate(rules_of(one_letter(place)), start=1):
        rule = Rule.objects.filter(name=name, deleted_at__isnull=True).first()
        if rule is None or rule.match != match:
            if rule is not None:
                Rule.objects.filter(pk=rule.pk).delete()
            started = time.perf_counter()
            rule = do_create_rule(actor=admin, name=name, match=match, action=action, position=position * 10,
                                  enabled=True, reason="benchmark")
            print(f"  made and enabled {name!r} in {time.perf_counter() - started:.1f} s", flush=True)
        made.append(rule)
    return made


def inbox_due() -> int | None:
    """Letters waiting to be decided now (None without an inbox: every round looks at all)."""
    from django.utils import timezone

    try:
        from console.models import RuleInbox
    except ImportError:
        return None
    return RuleInbox.objects.filter(due_at__lte=timezone.now()).count()


def settle(apply_rules, limit: int = 2000) -> tuple[int, float]:
    """Rounds until nothing is left to decide: (rounds, seconds)."""
    started, rounds = time.perf_counter(), 0
    while rounds < limit:
        apply_rules()
        rounds += 1
        due = inbox_due()
        if due is None and rounds >= 3 or due == 0:
            break
    return rounds, time.perf_counter() - started


def backend_cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load() -> str:
    return "load average " + ", ".join(f"{x:.2f}" for x in os.getloadavg())


def fresh_arrivals_place():
    from django.db import connection

    from console.models import DeadPlace, LetterHandling

    broker_place = DeadPlace.objects.get(name="orders.dlq")
    arrivals, _ = DeadPlace.objects.get_or_create(broker_id=broker_place.broker_id, name="orders.arrivals")
    ids = "SELECT id FROM console_deadletter WHERE place_id = %s"
    LetterHandling.objects.filter(letter__place=arrivals).delete()
    with connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass('console_ruleinbox') IS NOT NULL")
        if cursor.fetchone()[0]:
            cursor.execute(f"DELETE FROM console_ruleinbox WHERE letter_id IN ({ids})", [arrivals.pk])
    delete_letters(arrivals)
    return arrivals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--letters", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--steady-seconds", type=int, default=300)
    parser.add_argument("--arrivals", type=int, default=3)
    parser.add_argument("--skip-rounds", action="store_true")
    parser.add_argument("--after-rounds", action="store_true",
                        help="dry-run after the rounds have decided what is held (a console in use), not "
                             "while every held letter waits in the rules' inbox (a rule set just changed)")
    parser.add_argument("--probes", action="store_true", help="also dry-run body paths on common values")
    parser.add_argument("--skip-baseline", action="store_true", help="leave out the body path matched in Python")
    parser.add_argument("--wide", action="store_true",
                        help="also dry-run drafts that match most of the letters, against deciding each in Python")
    args = parser.parse_args()
    os.environ.setdefault("DLO_APPROVAL_THRESHOLD", "100000000")
    setup_django(example="dlo_bench_rules1m")

    import random

    from django.contrib.auth import get_user_model
    from django.db import connection

    from benchmarks.seed_letters import seed_letters
    from console.access.roles import set_role
    from console.jobs.automation.rules_at_work import apply_rules
    from console.models import DeadLetter, LetterState, RuleInbox
    from console.services.rules import dry_run

    place = seeded_place("orders.dlq", args.letters)
    arrivals = fresh_arrivals_place()
    vacuum_analyze()
    admin, _ = get_user_model().objects.get_or_create(username="bench-rules-admin")
    set_role(admin, "admin")
    print(f"\n{DeadLetter.objects.filter(state=LetterState.HELD).count():,} held letters; {load()}", flush=True)
    rules = enabled(admin, place)
    if args.after_rounds:
        rounds, seconds = settle(apply_rules)
        print(f"deciding what is held before the dry runs: {rounds} rounds, {seconds:.1f} s; "
              f"{RuleInbox.objects.count():,} letters left in the rules' inbox (due later)", flush=True)

    print(f"\nDry runs ({args.repeat} each after one warm-up; ms)", flush=True)
    print(f"{'rule (match kind)':28s} {'matched':>8s} {'p50':>8s} {'p95':>8s}  target p95 < {DRY_RUN_MS} ms")
    dry = {}
    for rule in rules:
        answer = dry_run(rule, reader=admin)
        times = call_timings(lambda rule=rule: dry_run(rule, reader=admin), args.repeat)
        dry[rule.name] = percentile(times, 95) * 1000
        print(f"{rule.name:28s} {answer.matched:8d} {percentile(times, 50) * 1000:8.0f} {dry[rule.name]:8.0f}  "
              f"{'met' if dry[rule.name] < DRY_RUN_MS else 'NOT met'}", flush=True)
    body_rule = next(rule for rule in rules if "body_path" in rule.match)
    if not args.skip_baseline:
        started = time.perf_counter()
        old = python_body_path(place, body_rule.match["body_path"]["path"], body_rule.match["body_path"]["value"])
        old_ms = (time.perf_counter() - started) * 1000
        print(f"baseline: the body path matched in Python (every body read), {old} matched: {old_ms:.0f} ms; "
              f"ratio dry run p95 / baseline: {dry[body_rule.name] / old_ms:.3f}; {load()}", flush=True)
    if args.probes:
        from console.models import Rule

        print(f"\nBody-path probes (drafts after the ten rules; {args.repeat} each after one warm-up; ms)", flush=True)
        for name, match in body_path_probes(one_letter(place)):
            draft = Rule(name=name, match=match, action={"kind": "hold"}, position=10_000)
            answer = dry_run(draft, reader=admin)
            times = call_timings(lambda draft=draft: dry_run(draft, reader=admin), args.repeat)
            p95 = percentile(times, 95) * 1000
            print(f"{name:42s} {answer.matched:8d} {percentile(times, 50) * 1000:8.0f} {p95:8.0f}  "
                  f"{'met' if p95 < DRY_RUN_MS else 'NOT met'}; {load()}", flush=True)
    if args.wide:
        wide_drafts(admin, place, args.repeat)
    if args.skip_rounds:
        return

    print("\nRounds (console.jobs.automation.rules_at_work.apply_rules, in this process)", flush=True)
    rounds, seconds = settle(apply_rules)
    print(f"deciding what is held after enabling: {rounds} rounds, {seconds:.1f} s", flush=True)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    every = float(os.environ.get("DLO_RULES_SECONDS", "10"))  # as beat runs them (console.settings)
    steady: list[float] = []
    wall0, cpu0, db0 = time.perf_counter(), time.process_time(), backend_cpu_seconds(backend)
    while time.perf_counter() - wall0 < args.steady_seconds:
        started = time.perf_counter()
        apply_rules()
        steady.append(time.perf_counter() - started)
        time.sleep(max(0.0, every - (time.perf_counter() - started)))
    wall = time.perf_counter() - wall0
    cpu, db = time.process_time() - cpu0, backend_cpu_seconds(backend) - db0
    p95 = percentile(steady, 95) * 1000
    print(f"steady round (nothing new), {len(steady)} rounds over {wall:.0f} s: "
          f"p50 {percentile(steady, 50) * 1000:.1f} ms, p95 {p95:.1f} ms, max {max(steady) * 1000:.1f} ms; "
          f"target p95 < {STEADY_ROUND_MS} ms: "
          f"{'met' if p95 < STEADY_ROUND_MS else 'NOT met'}", flush=True)
    print(f"CPU over the steady period: worker {cpu / wall:.2%} of a core, its PostgreSQL backend {db / wall:.2%}; "
          f"target < {CPU_SHARE:.0%}: {'met' if (cpu + db) / wall < CPU_SHARE else 'NOT met'} (both together); "
          f"{load()}", flush=True)
    firsts, totals = [], []
    for n in range(args.arrivals):
        seed_letters(arrivals, ARRIVALS, days=0, seed=random.randrange(10**9), analyze=False)
        started = time.perf_counter()
        apply_rules()
        firsts.append(time.perf_counter() - started)
        rounds, seconds = settle(apply_rules)
        totals.append(firsts[-1] + seconds)
        print(f"  {ARRIVALS:,} arrived ({n + 1}): first round {firsts[-1] * 1000:.0f} ms; "
              f"all decided after {rounds + 1} rounds, {totals[-1] * 1000:.0f} ms", flush=True)
    worst = max(firsts) * 1000
    print(f"round after {ARRIVALS:,} new letters: max of {len(firsts)} {worst:.0f} ms; target < {ARRIVAL_ROUND_MS} ms: "
          f"{'met' if worst < ARRIVAL_ROUND_MS else 'NOT met'}; {load()}", flush=True)


if __name__ == "__main__":
    main()
