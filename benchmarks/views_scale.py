"""Saved views, their subscriptions and objectives beside a million held letters (issue 51):
200 views shared with everyone, 50 subscriptions to them (half at once, half digests), and 20
objectives on places.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/dlo_bench_rules1m .venv/bin/python benchmarks/views_scale.py

What is timed, each beside a baseline measured in the same run:

1. **The navigation's counts**: ``GET /views/menu/`` (each view's count of what the reader may
   see where the groups' counts answer it, the others left to ``/views/<id>/count/``, loaded
   after the menu) for an operator, ``--repeat`` times; then the menu and all those later counts
   one after another; the baseline: the same views counted exactly, one ``count()`` each, as a
   page without a cap would.
2. **Matching new letters against the views**: 2,000 letters arrive (COPY, as
   benchmarks/seed_letters.py seeds); the rules' round's batch matches them against the
   subscribed views (console.services.view_subscriptions.match_new_letters); the baseline:
   each of the 200 views asked anew for its letters since the last look (a poll per view).
3. **An idle console**: for ``--idle-seconds``, what beat runs for views and objectives (the
   rules' round every 10 s with nothing new, the objectives every 30 s, the digests every 60 s),
   this process's and its PostgreSQL backend's CPU as a share of a core.

Targets (issue 51): 1. p95 under 300 ms; 2. under 1 s; 3. under 1% of a core.
Options: ``--letters N`` (held letters in ``orders.dlq``, default 1,000,000), ``--views``,
``--subscriptions``, ``--repeat``, ``--idle-seconds``, ``--idle-only``, ``--skip-menu``.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import call_timings, percentile, seeded_place, setup_django, signed_in_client, timings
from benchmarks.rules_scale import backend_cpu_seconds, fresh_arrivals_place, load, settle

NAV_MS, MATCH_MS, IDLE_SHARE = 300, 1000, 0.01


def view_filters(place_ids: list[int], rng: random.Random, count: int) -> list[dict[str, str]]:
    """What people keep: a place, an origin, an exception, a state, a header, a body word, an age."""
    from benchmarks.seed_letters import EXCEPTIONS, ORIGINS

    kinds = [
        lambda: {"place": str(rng.choice(place_ids))},
        lambda: {"origin": rng.choice(ORIGINS)},
        lambda: {"exception": rng.choice([e for e, _ in EXCEPTIONS if e]).rsplit(".", 1)[-1]},
        lambda: {"state": rng.choice(["held", "held,failed", "replayed"])},
        lambda: {"header": "tenant", "header_value": rng.choice(["acme", "globex", "initech"])},
        lambda: {"origin": rng.choice(ORIGINS), "older_than": str(rng.choice([1, 24, 168]))},
        lambda: {"reason": rng.choice(["rejected", "expired", "maxlen"])},
        lambda: {"exception": "NoSuchException"},  # a narrow filter: nothing matches
    ]
    return [kinds[n % len(kinds)]() for n in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--letters", type=int, default=1_000_000)
    parser.add_argument("--views", type=int, default=200)
    parser.add_argument("--subscriptions", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--idle-seconds", type=int, default=120)
    parser.add_argument("--idle-only", action="store_true", help="only the idle period (views and objectives made)")
    parser.add_argument("--skip-menu", action="store_true", help="leave out the Views menu's counts")
    args = parser.parse_args()
    setup_django(example="dlo_bench_rules1m")

    from django.contrib.auth import get_user_model

    from console.access.roles import set_role
    from console.models import Channel, DeadLetter, LetterState, Objective, SavedView, Subscription
    from console.services.channels import do_add_channel, do_subscribe
    from console.services.objectives import do_set_objective
    from console.services.saved_views import do_save_view

    place = seeded_place("orders.dlq", args.letters)
    arrivals = fresh_arrivals_place()
    client = signed_in_client("bench-views", "operator")
    owner = get_user_model().objects.get(username="bench-views")
    admin, _ = get_user_model().objects.get_or_create(username="bench-views-admin")
    set_role(admin, "admin")
    Subscription.objects.filter(view__isnull=False).delete()
    SavedView.objects.filter(owner__in=[owner, admin]).delete()
    Objective.objects.filter(created_by="bench-views-admin").delete()
    rng = random.Random(51)
    views = [do_save_view(actor=owner, name=f"view {n}", filter=each, sharing="everyone")
             for n, each in enumerate(view_filters([place.pk, arrivals.pk], rng, args.views))]
    channel = Channel.objects.filter(name="bench-views").first() or do_add_channel(
        actor=admin, name="bench-views", kind="webhook", target="http://127.0.0.1:9/hook")
    for n in range(args.subscriptions):
        do_subscribe(actor=admin, channel=channel, events=[], user=owner,
                     view=views[n * len(views) // args.subscriptions], digest_minutes=15 if n % 2 else None)
    for n in range(20):
        do_set_objective(actor=admin, name=f"objective {n}", kind="oldest" if n % 2 else "resolved",
                         seconds=3600 * (n + 1), percent=None if n % 2 else 95, place=place if n % 3 else arrivals)
    held = DeadLetter.objects.filter(state=LetterState.HELD).count()
    print(f"\n{held:,} held letters, {args.views} views, {args.subscriptions} subscriptions, 20 objectives; "
          f"{load()}", flush=True)

    if args.idle_only:
        return idle(args.idle_seconds)
    if not args.skip_menu:
        menu_figures(client, views, args.repeat)
    match_figures(arrivals, views, args.subscriptions, rng)
    idle(args.idle_seconds)


def menu_figures(client, views: list, repeat: int) -> None:
    import re

    from console.services.saved_views import letters_filter
    from console.services.selection import filter_letters

    menu = timings(client, "/views/menu/", repeat)
    later = re.findall(r'hx-get="(/views/\d+/count/)"', client.get("/views/menu/").content.decode())
    whole = []  # the menu, then each count it left for later, one after another (a browser asks six at once)
    for _ in range(max(1, repeat // 4)):
        begun = time.perf_counter()
        client.get("/views/menu/")
        for url in later:
            client.get(url)
        whole.append(time.perf_counter() - begun)
    print(f"the menu opens with {len(views) - len(later)} of {len(views)} counts; the other {len(later)} counted "
          f"after it, one after another: {percentile(whole, 50) * 1000:.0f} ms in all (p50 of {len(whole)})",
          flush=True)
    started = time.perf_counter()
    for view in views:
        filter_letters(letters_filter(view)).count()
    exact = time.perf_counter() - started
    p95 = percentile(menu, 95) * 1000
    whole_ok = not later and p95 < NAV_MS
    print(f"navigation counts (/views/menu/, {repeat} after a warm-up): p50 {percentile(menu, 50) * 1000:.0f} "
          f"ms, p95 {p95:.0f} ms with {len(views) - len(later)} of {len(views)} counts in it; baseline, each view "
          f"counted exactly: {exact * 1000:.0f} ms; ratio {p95 / 1000 / exact:.3f}; target p95 < {NAV_MS} ms for "
          f"every count: {'met' if whole_ok else 'NOT met'} (the menu itself: {'met' if p95 < NAV_MS else 'NOT met'}); "
          f"{load()}", flush=True)


def match_figures(arrivals, views: list, subscriptions: int, rng: random.Random) -> None:
    from benchmarks.seed_letters import seed_letters
    from console.models import DeadLetter, Subscription
    from console.services.saved_views import letters_filter
    from console.services.selection import filter_letters
    from console.services.view_subscriptions import match_new_letters

    seed_letters(arrivals, 2000, days=0, seed=rng.randrange(10**9), analyze=False)
    new_ids = list(DeadLetter.objects.filter(place=arrivals).order_by("id").values_list("id", flat=True))
    matched = call_timings(lambda: match_new_letters(new_ids), 1)[0]
    since = DeadLetter.objects.filter(pk__in=new_ids).order_by("id").values_list("id", flat=True).first()
    started = time.perf_counter()
    for view in views:
        list(filter_letters(letters_filter(view)).filter(id__gte=since).values_list("id", flat=True))
    polled = time.perf_counter() - started
    first = Subscription.objects.filter(view__isnull=False).order_by("id").first()
    print(f"matching 2,000 new letters against the {subscriptions} subscribed views: {matched * 1000:.0f} ms "
          f"({first.matches.count() if first else 0} matches for the first); baseline, each of the {len(views)} "
          f"views polled for its new letters: "
          f"{polled * 1000:.0f} ms; ratio {matched / polled:.3f}; target < {MATCH_MS} ms: "
          f"{'met' if matched * 1000 < MATCH_MS else 'NOT met'}; {load()}", flush=True)


def idle(seconds_wanted: int) -> None:
    """This process's and its PostgreSQL backend's CPU over a period of what beat runs for views
    and objectives, with nothing new."""
    from django.db import connection

    from console.jobs.automation.rules_at_work import apply_rules
    from console.services.objectives import evaluate_objectives
    from console.services.view_subscriptions import tell_digests

    rounds, seconds = settle(apply_rules)  # what is due is decided first: idle is nothing left to decide
    print(f"deciding what was due before the idle period: {rounds} rounds, {seconds:.1f} s", flush=True)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = cursor.fetchone()[0]
    wall0, cpu0, db0 = time.perf_counter(), time.process_time(), backend_cpu_seconds(backend)
    ticks = 0
    while time.perf_counter() - wall0 < seconds_wanted:
        apply_rules()
        if ticks % 3 == 0:
            evaluate_objectives()
        if ticks % 6 == 0:
            tell_digests()
        ticks += 1
        time.sleep(max(0.0, wall0 + ticks * 10 - time.perf_counter()))
    wall = time.perf_counter() - wall0
    cpu, db = time.process_time() - cpu0, backend_cpu_seconds(backend) - db0
    share = (cpu + db) / wall
    print(f"idle console over {wall:.0f} s (rules' round every 10 s, objectives every 30 s, digests every 60 s): "
          f"worker {cpu / wall:.2%} of a core, its PostgreSQL backend {db / wall:.2%}; target < {IDLE_SHARE:.0%}: "
          f"{'met' if share < IDLE_SHARE else 'NOT met'}; {load()}", flush=True)


if __name__ == "__main__":
    os.environ.setdefault("DLO_APPROVAL_THRESHOLD", "100000000")
    main()
