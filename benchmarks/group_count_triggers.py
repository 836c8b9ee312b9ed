"""What the failure groups' count triggers (migration 0030) cost PostgreSQL per letter, as a
capture and a replay write: the same statements with the triggers on and off, in turn, in the
same run.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/dlo_bench_triggers \\
        .venv/bin/python benchmarks/group_count_triggers.py          # --letters 20000 --rounds 3

Each round and mode, in a place of its own: ``--letters`` letters of 1 KiB of 50 failure
groups, captured over the last hour (as a capture's are: a few keys of place, group and day a
batch), inserted by COPY in statements of 500 (as a capture's batches are, search rows left
for later), their state changed twice by UPDATE in
statements of 500 (held -> replaying -> replayed, as a replay marks and records them), then
deleted in statements of 500 (as retention does). "Off" disables the three triggers for the
round (its own letters only: they are inserted, changed and deleted with the triggers off, so
the counts stay exact). The CPU is the PostgreSQL backend's own (user + system from
``/proc/<pid>/stat``), in µs a letter; the ratio is on / off.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import setup_django  # noqa: E402

TRIGGERS = ("console_group_count_insert", "console_group_count_update", "console_group_count_delete")
STATEMENT = 500
TICK = os.sysconf("SC_CLK_TCK")


def backend_cpu(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def one_round(place, letters: int, on: bool) -> dict[str, float]:
    from django.db import connection, transaction

    from benchmarks.seed_letters import seed_letters
    from console.services.search_rows import written_later

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
        for name in TRIGGERS:
            cursor.execute(f"ALTER TABLE console_deadletter {'ENABLE' if on else 'DISABLE'} TRIGGER {name}")
    spent = {}
    try:
        before = backend_cpu(pid)
        with written_later():  # as a capture writes: search rows as placeholders
            seed_letters(place, letters, days=1 / 24, batch=STATEMENT, analyze=False)
        spent["insert"] = backend_cpu(pid) - before
        with connection.cursor() as cursor:
            cursor.execute("SELECT id FROM console_deadletter WHERE place_id = %s ORDER BY id", [place.pk])
            ids = [row[0] for row in cursor.fetchall()]
            for step, state in (("update (replaying)", "replaying"), ("update (replayed)", "replayed")):
                before = backend_cpu(pid)
                for start in range(0, len(ids), STATEMENT):
                    with transaction.atomic():
                        cursor.execute("UPDATE console_deadletter SET state = %s WHERE id = ANY(%s)",
                                       [state, ids[start:start + STATEMENT]])
                spent[step] = backend_cpu(pid) - before
            before = backend_cpu(pid)
            for start in range(0, len(ids), STATEMENT):
                with transaction.atomic():
                    cursor.execute("DELETE FROM console_lettersearch WHERE letter_id = ANY(%s)",
                                   [ids[start:start + STATEMENT]])
                    cursor.execute("DELETE FROM console_deadletter WHERE id = ANY(%s)", [ids[start:start + STATEMENT]])
            spent["delete"] = backend_cpu(pid) - before
    finally:
        with connection.cursor() as cursor:
            for name in TRIGGERS:
                cursor.execute(f"ALTER TABLE console_deadletter ENABLE TRIGGER {name}")
    return {step: seconds / letters * 1e6 for step, seconds in spent.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--letters", type=int, default=20_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    setup_django("dlo_bench_triggers")
    from console.models import Broker, DeadPlace

    broker, _ = Broker.objects.get_or_create(name="bench-triggers", defaults={"kind": "memory",
                                                                            "url": "memory://bench"})
    place, _ = DeadPlace.objects.get_or_create(broker=broker, name="triggers.dlq", defaults={"kind": "queue"})
    figures: dict[str, dict[str, list[float]]] = {"on": {}, "off": {}}
    for round_ in range(args.rounds):
        for mode in (("off", "on") if round_ % 2 == 0 else ("on", "off")):  # this machine's speed drifts
            for step, us in one_round(place, args.letters, mode == "on").items():
                figures[mode].setdefault(step, []).append(us)
    print(f"{args.letters:,} letters a round, {args.rounds} rounds; PostgreSQL backend CPU, µs a letter (median)")
    print(f"{'statement':22} {'triggers off':>13} {'triggers on':>12} {'ratio':>6}   runs on")
    for step in figures["on"]:
        off, on = statistics.median(figures["off"][step]), statistics.median(figures["on"][step])
        runs = " ".join(f"{v:.0f}" for v in figures["on"][step])
        print(f"{step:22} {off:13.1f} {on:12.1f} {on / off:6.2f}   {runs}")


if __name__ == "__main__":
    main()
