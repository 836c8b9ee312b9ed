"""Issue 48: a million letters exported through the API in each format (JSON Lines, CSV,
Parquet), streamed to a file as a client would save it: the letters per second, the bytes, and
this process's (the web process's) peak resident memory against its size before. The baseline,
in the same run: the same export of a 10,000-letter place, whose rate the million's is compared
with (a flat ratio: the export's cost per letter does not grow with the selection). Each file is
then read back with Python's ``json`` and ``csv`` and with pyarrow: the same count and ids.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/dlo_bench1m .venv/bin/python benchmarks/export.py
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import (  # noqa: E402
    peak_rss_mib,
    reset_peak_rss,
    rss_mib,
    seeded_place,
    setup_django,
    signed_in_client,
    vacuum_analyze,
)

FORMATS = ("jsonl", "csv", "parquet")


def export(client, place, format_name: str, folder: Path) -> dict:
    """One export of the place's letters, written to a file as it streams; its figures."""
    path = folder / f"{place.name}.{format_name}"
    reset_peak_rss()
    before = rss_mib() or 0.0
    started = time.perf_counter()
    answer = client.get("/api/letters/export/", {"format": format_name, "place": place.pk})
    assert answer.status_code == 200, answer.content
    size = 0
    with path.open("wb") as out:
        for piece in answer.streaming_content:
            out.write(piece)
            size += len(piece)
    seconds = time.perf_counter() - started
    return {"path": path, "seconds": seconds, "bytes": size, "before": before, "peak": peak_rss_mib()}


def read_back(format_name: str, path: Path) -> list[int]:
    """The letters' ids, as the format's own reader reads the file."""
    if format_name == "jsonl":
        with path.open("rb") as f:
            next(f)  # the export's meta
            return [json.loads(line)["id"] for line in f]
    if format_name == "csv":
        csv.field_size_limit(64 * 1024 * 1024)
        with path.open(newline="", encoding="utf-8") as f:
            return [int(row["id"]) for row in csv.DictReader(f)]
    import pyarrow.parquet as pq

    return pq.read_table(path, columns=["id"]).column("id").to_pylist()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--letters", type=int, default=1_000_000)
    parser.add_argument("--baseline", type=int, default=10_000)
    parser.add_argument("--formats", default=",".join(FORMATS))
    args = parser.parse_args()
    setup_django(example="dlo_bench1m")
    from console.models import DeadLetter

    big = seeded_place("orders.dlq", args.letters)
    small = seeded_place("small.dlq", args.baseline)
    vacuum_analyze()
    client = signed_in_client()
    print(f"\n{args.letters:,} letters vs {args.baseline:,}, streamed to a file; peak RSS of this process "
          f"(the web process) against its size before\n")
    print(f"{'format':8s} {'letters/s':>10s} {'baseline/s':>10s} {'ratio':>6s} {'MiB':>8s} {'s':>7s} "
          f"{'RSS before':>10s} {'peak':>7s} {'rise':>6s}  read back")
    with tempfile.TemporaryDirectory() as folder:
        for format_name in args.formats.split(","):
            base = export(client, small, format_name, Path(folder))
            m = export(client, big, format_name, Path(folder))
            ids = read_back(format_name, m["path"])
            expected = list(DeadLetter.objects.filter(place=big).order_by("id").values_list("id", flat=True))
            same = "same count and ids" if ids == expected else f"DIFFERENT ({len(ids):,} of {len(expected):,})"
            rate, base_rate = args.letters / m["seconds"], args.baseline / base["seconds"]
            print(f"{format_name:8s} {rate:10,.0f} {base_rate:10,.0f} {rate / base_rate:6.2f} "
                  f"{m['bytes'] / 2**20:8,.0f} {m['seconds']:7.1f} {m['before']:8.0f} M {m['peak']:5.0f} M "
                  f"{m['peak'] - m['before']:+5.0f}M  {same}", flush=True)
            m["path"].unlink()


if __name__ == "__main__":
    main()
