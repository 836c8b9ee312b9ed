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
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import (  # noqa: E402
    call_timings,
    percentile,
    seeded_place,
    setup_django,
    signed_in_client,
    timings,
    vacuum_analyze,
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--letters", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    setup_django()
    from django.urls import reverse

    from benchmarks.seed_letters import failure_groups
    from console.services.selection import filter_letters

    big = seeded_place("orders.dlq", args.letters)
    small = seeded_place("small.dlq", 1_000)
    vacuum_analyze()
    client = signed_in_client()

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
        # Issue 46: words as people type them (a part, any case; "exactly"), and sorted columns.
        ("place page, exception: a part, other case", "place",
         {"exception": group.exception_type.rsplit(".", 1)[-1][2:12].upper()}),
        ("place page, exception: \"exactly\"", "place", {"exception": f'"{group.exception_type}"'}),
        ("place page, reason: a part", "place", {"reason": "reject"}),
        ("place page, sorted by deaths", "place", {"sort": "deaths"}),
        ("place page, sorted by deaths, 2nd page", "place", {"sort": "deaths", "after": "PAGE2"}),
        ("place page, sorted by body size", "place", {"sort": "size"}),
        ("place page, sorted by exception type", "place", {"sort": "exception"}),
        ("groups view of the place", "place-groups", {}),
        ("groups view of the place, any state", "place-groups", {"state": "any"}),
    ]
    inventory = timings(client, reverse("inventory"), args.repeat)
    groups_all = timings(client, reverse("groups"), args.repeat)
    from urllib.parse import urlencode

    print(f"\n{args.letters:,} letters vs 1,000; {args.repeat} requests each; times in ms (p50 / p95)\n")
    for label, name, query in cases:
        urls = []
        for place in (big, small):
            asked = dict(query)
            if asked.get("after") == "PAGE2":  # where the first page of that order ends
                from console.web.paging import PAGE_SIZE, SORTS

                order = SORTS[asked["sort"]].ordering()
                asked["after"] = str(list(place.letters.order_by(*order).values_list("id", flat=True)
                                          [PAGE_SIZE - 1:PAGE_SIZE])[0])
            urls.append(reverse(name, args=[place.pk]) + ("?" + urlencode(asked) if asked else ""))
        figure = timings(client, urls[0], args.repeat)
        base = timings(client, urls[1], args.repeat)
        f50, f95, b50 = percentile(figure, 50) * 1000, percentile(figure, 95) * 1000, percentile(base, 50) * 1000
        print(f"{label:45s} {f50:7.1f} / {f95:7.1f}   baseline {b50:6.1f}   p50 ratio {f50 / b50:5.2f}")

    print(f"{'inventory (both places)':45s} {percentile(inventory, 50) * 1000:7.1f} / "
          f"{percentile(inventory, 95) * 1000:7.1f}")
    print(f"{'groups view, all places':45s} {percentile(groups_all, 50) * 1000:7.1f} / "
          f"{percentile(groups_all, 95) * 1000:7.1f}")

    filters = {"place": big.pk, "header": "tenant", "header_value": "tenant-07"}
    sql = call_timings(lambda: list(filter_letters(filters).defer("body").order_by("id")[:51]), args.repeat)
    count = call_timings(lambda: filter_letters(filters).order_by().values("id")[:10_001].count(), args.repeat)
    print(f"\nbare SQL, first page by header: p50 {percentile(sql, 50) * 1000:.1f} ms; "
          f"capped count: p50 {percentile(count, 50) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
