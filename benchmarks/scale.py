"""The letters API, the failure-group counts and select-all-matching jobs with 1,000,000 letters
in one place, against a 10,000-letter place measured in the same run.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/dlo_bench1m .venv/bin/python benchmarks/scale.py

Options: ``--letters N`` (default 1,000,000), ``--baseline M`` (default 10,000), ``--repeat R``
(default 20). The database is created when missing and migrated; the place ``orders.dlq``
gets N letters and ``small.dlq`` M (benchmarks/seed_letters.py, by COPY; skipped when they
already hold that many), then ``VACUUM ANALYZE``. Signed in as an operator with Django's test
Client, each request is sent once to warm up and then R times; it prints p50 and p95 for the
big place, the p50 of the same request on the small place and their ratio, and the peak
resident memory of the process while the big place's requests ran (VmHWM, reset through
/proc/self/clear_refs before each line) with how much it rose over the memory held before.

The jobs are made through ``POST /api/jobs/`` (mark_failed, a filter: select all matching).
None of them runs: Celery is pointed at ``memory://``, most wait for approval (over
DLO_APPROVAL_THRESHOLD letters), and the run cancels every job it made at the end (audited),
so the letters stay held for the next run. The targets of issue 6 are printed beside the
figures.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.harness import (  # noqa: E402
    peak_rss_mib,
    percentile,
    reset_peak_rss,
    rss_mib,
    seeded_place,
    setup_django,
    signed_in_client,
    timings,
    vacuum_analyze,
)

#: Issue 6's targets at 1,000,000 letters, in milliseconds at p95.
PAGE_TARGET_MS = 100
FILTERED_TARGET_MS = 300
JOB_TARGET_MS = 2000


@dataclass
class Case:
    """One request, sent to the big place and to the baseline place."""

    label: str
    method: str
    path: str
    params: dict = field(default_factory=dict)  # query string of a GET, per place
    body: dict = field(default_factory=dict)  # JSON of a POST, per place
    expect: int = 200
    target_ms: int | None = None


def _one_letter(place, *, position: float = 0.5) -> dict:
    """A letter about ``position`` of the way through the place: its id, trace-id and order
    number (values only that one letter holds), for the needle-in-a-haystack filters."""
    from console.models import DeadLetter

    letters = DeadLetter.objects.filter(place=place).order_by("id")
    total = letters.count()
    letter = letters.defer("body")[int(total * position)]
    body = json.loads(bytes(DeadLetter.objects.values_list("body", flat=True).get(pk=letter.pk)))
    return {"id": letter.pk, "trace_id": letter.headers["trace-id"], "order": f'"order_id": {body["order_id"]},'}


def cases(big, small) -> list[Case]:
    from django.urls import reverse

    letters, groups = reverse("api-letters"), "place-groups"
    one = {big.pk: _one_letter(big), small.pk: _one_letter(small)}
    held = {"state": "held"}

    def per_place(make):
        return {place.pk: make(place) for place in (big, small)}

    return [
        Case("letters page, no filter", "get", letters, per_place(lambda p: {"place": p.pk}),
             target_ms=PAGE_TARGET_MS),
        Case("letters page, half way down (cursor)", "get", letters,
             per_place(lambda p: {"place": p.pk, "cursor": one[p.pk]["id"]}), target_ms=PAGE_TARGET_MS),
        Case("letters page, held", "get", letters, per_place(lambda p: {"place": p.pk, **held}),
             target_ms=PAGE_TARGET_MS),
        Case("letters, header tenant=tenant-07 (1 in 40)", "get", letters,
             per_place(lambda p: {"place": p.pk, "header": "tenant", "header_value": "tenant-07"}),
             target_ms=FILTERED_TARGET_MS),
        Case("letters, header trace-id of one letter", "get", letters,
             per_place(lambda p: {"place": p.pk, "header": "trace-id", "header_value": one[p.pk]["trace_id"]}),
             target_ms=FILTERED_TARGET_MS),
        Case("letters, body has \"gift wrap\" (1 in 4)", "get", letters,
             per_place(lambda p: {"place": p.pk, "q": "gift wrap"}), target_ms=FILTERED_TARGET_MS),
        Case("letters, body has one letter's order id", "get", letters,
             per_place(lambda p: {"place": p.pk, "q": one[p.pk]["order"]}), target_ms=FILTERED_TARGET_MS),
        Case("letters, body text no letter holds", "get", letters,
             per_place(lambda p: {"place": p.pk, "q": "no-letter-says-this"}), target_ms=FILTERED_TARGET_MS),
        Case("failure groups of the place (held)", "get", groups),
        Case("failure groups of the place, any state", "get", groups, per_place(lambda p: {"state": "any"})),
        Case("job preview, all held", "post", reverse("api-jobs-preview"),
             body=per_place(lambda p: {"filter": {"place": str(p.pk), **held}})),
        Case("job preview, tenant=tenant-07", "post", reverse("api-jobs-preview"),
             body=per_place(lambda p: {"filter": {"place": str(p.pk), "header": "tenant",
                                                  "header_value": "tenant-07"}})),
        Case("create job, select all held", "post", reverse("api-jobs"),
             body=per_place(lambda p: {"action": "mark_failed", "reason": "benchmark: select all",
                                       "filter": {"place": str(p.pk), **held}}),
             expect=202, target_ms=JOB_TARGET_MS),
        Case("create job, select all tenant=tenant-07", "post", reverse("api-jobs"),
             body=per_place(lambda p: {"action": "mark_failed", "reason": "benchmark: select all",
                                       "filter": {"place": str(p.pk), "header": "tenant",
                                                  "header_value": "tenant-07"}}),
             expect=202, target_ms=JOB_TARGET_MS),
        Case("create job, select all with \"gift wrap\"", "post", reverse("api-jobs"),
             body=per_place(lambda p: {"action": "mark_failed", "reason": "benchmark: select all",
                                       "filter": {"place": str(p.pk), "q": "gift wrap"}}),
             expect=202, target_ms=JOB_TARGET_MS),
    ]


def _url(case: Case, place) -> str:
    from urllib.parse import urlencode

    from django.urls import reverse

    path = reverse(case.path, args=[place.pk]) if not case.path.startswith("/") else case.path
    query = case.params.get(place.pk)
    return f"{path}?{urlencode(query)}" if query else path


def measure(client, case: Case, big, small, repeat: int) -> dict:
    def run(place, times):
        return timings(client, _url(case, place), times, method=case.method, data=case.body.get(place.pk),
                       expect=case.expect)

    before = rss_mib()
    reset = reset_peak_rss()
    figure = run(big, repeat)
    peak = peak_rss_mib() if reset else None
    base = run(small, repeat)
    return {"p50": percentile(figure, 50) * 1000, "p95": percentile(figure, 95) * 1000,
            "base50": percentile(base, 50) * 1000, "peak": peak, "rise": (peak - before) if peak and before else None}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--letters", type=int, default=1_000_000)
    parser.add_argument("--baseline", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    setup_django(example="dlo_bench1m")

    from console.models import Job

    big = seeded_place("orders.dlq", args.letters)
    small = seeded_place("small.dlq", args.baseline)
    vacuum_analyze()
    client = signed_in_client()
    before = Job.objects.order_by("-id").values_list("id", flat=True).first() or 0

    print(f"\n{args.letters:,} letters vs {args.baseline:,}; {args.repeat} requests each after one warm-up; "
          f"times in ms; peak RSS of this process while the big place's requests ran\n")
    print(f"{'request':44s} {'p50':>7s} {'p95':>7s}  {'baseline p50':>12s} {'ratio':>6s}  "
          f"{'peak RSS':>9s} {'rise':>6s}  target (p95)")
    try:
        for case in cases(big, small):
            m = measure(client, case, big, small, args.repeat)
            verdict = ""
            if case.target_ms:
                verdict = f"< {case.target_ms} ms: {'met' if m['p95'] < case.target_ms else 'NOT met'}"
            peak = f"{m['peak']:6.0f} MiB {m['rise']:+5.0f}" if m["peak"] else "     n/a"
            print(f"{case.label:44s} {m['p50']:7.1f} {m['p95']:7.1f}  {m['base50']:12.1f} "
                  f"{m['p50'] / m['base50']:6.2f}  {peak}  {verdict}", flush=True)
    finally:
        cancel_jobs_after(before)


def cancel_jobs_after(job_id: int) -> None:
    """Cancel the jobs this run made (ids above ``job_id``), so no worker ever runs them."""
    from console.jobs.door.steering import do_cancel_job
    from console.models import Job

    for job in Job.objects.filter(id__gt=job_id).exclude(status__in=Job.FINISHED):
        do_cancel_job(job, actor="cli:bench-scale", reason="benchmark job, never meant to run")


if __name__ == "__main__":
    main()
