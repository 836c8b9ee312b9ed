"""How fast the place page and the failure groups view answer with 100,000 letters in a place.

Run (the database is created if missing, migrated, and its letters replaced):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/dlo_bench .venv/bin/python benchmarks/pages.py

Options: ``--letters N`` (default 100,000), ``--repeat R`` (default 15). It seeds a place
with N letters and a second place with 1,000 as the baseline, signs in with Django's test
Client, and prints p50/p95 per page as "figure / baseline = ratio", where the baseline is the
same request on the 1,000-letter place. The bare SQL of the letter list is timed too, so a
slow page can be told apart from a slow query.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
os.environ.setdefault("SECRET_KEY", "benchmark-only-secret-key")
os.environ.setdefault("ALLOWED_HOSTS", "testserver,localhost")
os.environ.setdefault("SECURE_COOKIES", "false")


def _create_database(url: str) -> None:
    """CREATE DATABASE for the name in ``url`` when it does not exist (connecting to postgres)."""
    import psycopg
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def _timings(client, url: str, repeat: int) -> list[float]:
    client.get(url)  # warm: the first request pays for imports and template compilation
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        response = client.get(url)
        times.append(time.perf_counter() - started)
        assert response.status_code == 200, (url, response.status_code)
    return times


def _sql_timings(run, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return times


def _p(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1] if len(values) > 1 else values[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--letters", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL")
    if not url:
        sys.exit("Set DATABASE_URL to a database the benchmark may fill, e.g. .../dlo_bench")
    _create_database(url)

    import django

    django.setup()
    from django.core.management import call_command
    from django.test import Client
    from django.urls import reverse

    call_command("migrate", verbosity=0)

    from django.contrib.auth import get_user_model

    from benchmarks.seed_letters import failure_groups, seed_letters, seed_samples
    from console.models import Broker, DeadLetter, DeadPlace, PlaceSample
    from console.services.selection import filter_letters

    broker, _ = Broker.objects.get_or_create(name="bench", defaults={"kind": "memory", "url": "memory://bench"})
    big, _ = DeadPlace.objects.get_or_create(broker=broker, name="orders.dlq")
    small, _ = DeadPlace.objects.get_or_create(broker=broker, name="small.dlq")
    for place, count in ((big, args.letters), (small, 1_000)):
        if DeadLetter.objects.filter(place=place).count() != count:
            DeadLetter.objects.filter(place=place).delete()
            PlaceSample.objects.filter(place=place).delete()
            started = time.perf_counter()
            seed_letters(place, count)
            seed_samples(place)
            print(f"seeded {count:,} letters into {place.name} in {time.perf_counter() - started:.1f} s")
    from django.db import connection

    with connection.cursor() as cursor:
        # As autovacuum would after a burst of inserts: the visibility map lets the failure
        # groups read their index alone (index-only scan), as they do in steady operation.
        cursor.execute("VACUUM ANALYZE console_deadletter")
    user = get_user_model().objects.filter(username="bench").first() or get_user_model().objects.create_user("bench")
    client = Client()
    client.force_login(user)

    import random

    group = failure_groups(random.Random(7))[3]  # a middle-sized group
    cases = [
        ("place page, no filter", "place", {}),
        ("place page, header tenant=tenant-07", "place", {"header": "tenant", "header_value": "tenant-07"}),
        ("place page, body contains \"gift wrap\"", "place", {"q": "gift wrap"}),
        ("place page, body text no letter holds", "place", {"q": "no-letter-says-this"}),
        ("place page, exception + older than 1 day", "place",
         {"exception": group.exception_type, "older_than": "24"}),
        ("place page, one failure group", "place", {"fingerprint": group.fingerprint}),
        ("groups view of the place", "place-groups", {}),
        ("groups view of the place, any state", "place-groups", {"state": "any"}),
    ]
    inventory = _timings(client, reverse("inventory"), args.repeat)
    groups_all = _timings(client, reverse("groups"), args.repeat)
    from urllib.parse import urlencode

    print(f"\n{args.letters:,} letters vs 1,000; {args.repeat} requests each; times in ms (p50 / p95)\n")
    for label, name, query in cases:
        suffix = "?" + urlencode(query) if query else ""
        figure = _timings(client, reverse(name, args=[big.pk]) + suffix, args.repeat)
        base = _timings(client, reverse(name, args=[small.pk]) + suffix, args.repeat)
        f50, f95, b50 = _p(figure, 50) * 1000, _p(figure, 95) * 1000, _p(base, 50) * 1000
        print(f"{label:45s} {f50:7.1f} / {f95:7.1f}   baseline {b50:6.1f}   p50 ratio {f50 / b50:5.2f}")

    print(f"{'inventory (both places)':45s} {_p(inventory, 50) * 1000:7.1f} / {_p(inventory, 95) * 1000:7.1f}")
    print(f"{'groups view, all places':45s} {_p(groups_all, 50) * 1000:7.1f} / {_p(groups_all, 95) * 1000:7.1f}")

    filters = {"place": big.pk, "header": "tenant", "header_value": "tenant-07"}
    sql = _sql_timings(lambda: list(filter_letters(filters).defer("body").order_by("id")[:51]), args.repeat)
    count = _sql_timings(lambda: filter_letters(filters).order_by().values("id")[:10_001].count(), args.repeat)
    print(f"\nbare SQL, first page by header: p50 {_p(sql, 50) * 1000:.1f} ms; "
          f"capped count: p50 {_p(count, 50) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
