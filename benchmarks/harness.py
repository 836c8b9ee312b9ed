"""What the benchmarks share: Django set up against the database in ``DATABASE_URL`` (created
when missing, then migrated), seeded places, timed requests and their percentiles, and the
peak resident memory of a stretch of work.

Import this module before Django: it sets the settings a script needs (a secret key, the test
Client's host, no secure cookies) when the environment does not.
"""

from __future__ import annotations

import os
import resource
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "console.settings")
os.environ.setdefault("SECRET_KEY", "benchmark-only-secret-key")
os.environ.setdefault("ALLOWED_HOSTS", "testserver,localhost")
os.environ.setdefault("SECURE_COOKIES", "false")


# -- the database --------------------------------------------------------------------------------

def create_database(url: str) -> None:
    """CREATE DATABASE for the name in ``url`` when it does not exist (connecting to postgres)."""
    from urllib.parse import urlsplit, urlunsplit

    import psycopg

    parts = urlsplit(url)
    name = parts.path.lstrip("/")
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')


def setup_django(example: str = "dlo_bench") -> None:
    """Create the database of ``DATABASE_URL`` when missing, set Django up and migrate."""
    os.environ.setdefault("DEBUG", "false")  # DEBUG keeps every query in memory
    # Jobs are never run by a worker here: what the services hand to Celery on commit goes to
    # an in-memory transport that nobody reads (not to the filesystem queue a worker of
    # `make run` would pick up); benchmarks that run a job call console.jobs.door.runner.run_job.
    os.environ.setdefault("CELERY_BROKER_URL", "memory://")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    url = os.environ.get("DATABASE_URL")
    if not url:
        sys.exit("Set DATABASE_URL to a database the benchmark may fill, e.g. "
                 f"postgres://postgres@127.0.0.1:5432/{example}")
    create_database(url)
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def seeded_place(name: str, count: int, *, samples: bool = True):
    """The dead place ``name`` holding exactly ``count`` seeded letters: seeded
    (benchmarks/seed_letters.py) unless it already holds that many, which saves minutes on a
    second run. Its broker is the in-memory ``bench``; nothing is ever sent to it."""
    from benchmarks.seed_letters import seed_letters, seed_samples
    from console.models import Broker, DeadLetter, DeadPlace, PlaceSample

    broker, _ = Broker.objects.get_or_create(name="bench", defaults={"kind": "memory", "url": "memory://bench"})
    place, _ = DeadPlace.objects.get_or_create(broker=broker, name=name)
    if DeadLetter.objects.filter(place=place).count() != count:
        delete_letters(place)
        PlaceSample.objects.filter(place=place).delete()
        started = time.perf_counter()
        seed_letters(place, count)
        if samples:
            seed_samples(place)
        print(f"seeded {count:,} letters into {place.name} in {time.perf_counter() - started:.1f} s", flush=True)
    return place


def delete_letters(place) -> None:
    """The place's letters and the rows that hang off them, deleted by SQL. Django's delete()
    loads every letter to cascade by hand: over 8 GiB for 1,000,000 letters."""
    from django.db import connection, transaction

    from console.models import DeadLetter, LetterDocument, LetterSearch, PendingAck

    letters = DeadLetter._meta.db_table
    of_place = f"SELECT id FROM {letters} WHERE place_id = %s"
    with transaction.atomic(), connection.cursor() as cursor:
        for model in (LetterSearch, LetterDocument, PendingAck):
            cursor.execute(f"DELETE FROM {model._meta.db_table} WHERE letter_id IN ({of_place})", [place.pk])
        cursor.execute(f"UPDATE {letters} SET parent_id = NULL WHERE parent_id IN ({of_place}) "
                       "AND place_id <> %s", [place.pk, place.pk])
        cursor.execute(f"DELETE FROM {letters} WHERE place_id = %s", [place.pk])


def vacuum_analyze() -> None:
    """As autovacuum would after a burst of inserts or deletes: fresh statistics, the space of
    deleted rows free again, and the visibility map that lets the failure groups read their
    index alone (index-only scan), as in steady operation. (The development machine's
    PostgreSQL runs without autovacuum: without this, every run would leave the next one its
    dead rows to wade through.)"""
    from django.db import connection

    with connection.cursor() as cursor:
        for table in ("console_deadletter", "console_lettersearch", "console_letterdocument", "console_letterflight",
                      "console_pendingack", "console_groupcount"):
            cursor.execute(f"VACUUM ANALYZE {table}")


def signed_in_client(username: str = "bench-operator", role: str = "operator"):
    """Django's test Client signed in (session) as ``username``, who holds ``role``: every page
    and API call answers 403 to a user without one."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    from console.access.roles import set_role

    user, _ = get_user_model().objects.get_or_create(username=username)
    set_role(user, role)
    client = Client()
    client.force_login(user)
    return client


# -- timing --------------------------------------------------------------------------------------

def timings(client, url: str, repeat: int, *, method: str = "get", data=None, expect: int = 200) -> list[float]:
    """Seconds taken by ``repeat`` requests of ``url`` through Django's test Client, after one
    warm-up request (which pays for imports and template compilation)."""
    send = getattr(client, method)
    kwargs = {"data": data, "content_type": "application/json"} if method == "post" else {}
    send(url, **kwargs)
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        response = send(url, **kwargs)
        times.append(time.perf_counter() - started)
        assert response.status_code == expect, (url, response.status_code, response.content[:500])
    return times


def call_timings(run, repeat: int) -> list[float]:
    """Seconds taken by ``repeat`` calls of ``run()``."""
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return times


def percentile(values: list[float], q: int) -> float:
    """The q-th percentile (inclusive method), or the only value."""
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def print_paired(times: dict[str, list[float]], unit: str) -> None:
    """Paired rounds of an old and a new way (``times``: the old first, then the new, µs each
    round): each one's median, lowest and highest, then the median of the rounds' ratios."""
    (old, old_times), (new, new_times) = times.items()
    width = max(len(old), len(new))
    for name, values in times.items():
        print(f"{name:{width}} CPU µs {unit}: median {statistics.median(values):.1f} "
              f"(lowest {min(values):.1f}, highest {max(values):.1f})")
    ratios = [ours / theirs for ours, theirs in zip(new_times, old_times, strict=True)]
    print(f"ratio {new} / {old}, median of {len(ratios)} rounds: {statistics.median(ratios):.2f}")


# -- memory --------------------------------------------------------------------------------------

def reset_peak_rss() -> bool:
    """Reset the kernel's high-water mark of resident memory (VmHWM), so the next reading is
    the peak of what follows. Linux only; False if it cannot be reset."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _status_mib(field: str) -> float | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def rss_mib() -> float | None:
    """The process's resident memory now (VmRSS), in MiB."""
    return _status_mib("VmRSS")


def peak_rss_mib() -> float:
    """The process's peak resident memory since the last reset (VmHWM), in MiB."""
    peak = _status_mib("VmHWM")
    return peak if peak is not None else lifetime_peak_rss_mib()


def lifetime_peak_rss_mib() -> float:
    """getrusage's ru_maxrss: the peak over the whole process (KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
