"""The failure groups the database counts (console.services.group_counts) stay exactly what
counting the letters themselves gives, through a real capture, a replay, a purge, the deletion
retention makes, and the folding of the counts: each group's count, origins, places, first and
last letters and sample, and its letters per day, held and in any state."""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime, time

import pytest
from django.db import connection

from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import DeadLetter, GroupCount, LetterState
from console.services.brokers import do_discover
from console.services.group_counts import fold
from console.services.groups import daily_counts, failure_groups

pytestmark = [pytest.mark.rabbitmq, pytest.mark.django_db]

EXCEPTIONS = ["com.acme.CardDeclined: card declined", "java.net.SocketTimeoutException: read timed out",
              "com.acme.NoSuchSku: sku 7 is unknown"]


def counted_from_the_letters(place, states: list[str] | None) -> dict[str, dict]:
    """Each group of the place's letters in ``states`` (all when None), counted here."""
    letters = DeadLetter.objects.filter(place=place)
    if states is not None:
        letters = letters.filter(state__in=states)
    groups: dict[str, dict] = defaultdict(
        lambda: {"count": 0, "origins": set(), "captured": [], "days": defaultdict(int)})
    for fingerprint, origin, captured_at, pk in letters.values_list("fingerprint", "origin_queue", "captured_at", "id"):
        group = groups[fingerprint]
        group["count"] += 1
        group["origins"].add(origin)
        group["captured"].append((captured_at, pk))
        day = datetime.combine(captured_at.astimezone(UTC).date(), time.min, tzinfo=UTC)
        group["days"][day] += 1
    return {fingerprint: {"count": g["count"], "origins": sorted(g["origins"]), "places": [place.pk],
                          "first_seen": min(g["captured"])[0], "last_seen": max(g["captured"])[0],
                          "sample_id": min(g["captured"])[1], "days": dict(g["days"])}
            for fingerprint, g in groups.items()}


def assert_exact(place, when: str) -> None:
    for state in ("held", "replayed,purged", None):
        params = {"place": place.pk} if state is None else {"place": place.pk, "state": state}
        expected = counted_from_the_letters(place, state.split(",") if state else None)
        groups = failure_groups(params)
        got = {g.fingerprint: {"count": g.count, "origins": g.origins, "places": g.places, "first_seen": g.first_seen,
                               "last_seen": g.last_seen, "sample_id": g.sample_id} for g in groups}
        assert got == {fp: {k: v for k, v in g.items() if k != "days"} for fp, g in expected.items()}, (when, state)
        assert [g.count for g in groups] == sorted((g["count"] for g in expected.values()), reverse=True)
        per_day = daily_counts(params, list(expected))
        assert {fp: {day: n for day, n in days if n} for fp, days in per_day.items()} == {
            fp: g["days"] for fp, g in expected.items()}, (when, state)


@pytest.mark.role("admin")  # a purge is an admin's
def test_counts_stay_exact_through_capture_replay_purge_retention_and_folding(kit, rabbit_broker, operator,
                                                                             settings):
    settings.DLO_BATCH_SIZE = 7  # several statements, each counted by its own trigger call
    settings.DLO_APPROVAL_THRESHOLD = 1000
    dlq = kit.queue(kit.name("counted") + ".dlq")
    origins = [kit.queue(kit.name(name), {"x-message-ttl": 0, "x-dead-letter-exchange": "",
                                          "x-dead-letter-routing-key": dlq}) for name in ("orders", "payments")]
    for n in range(40):  # expired at once into the DLQ, with real x-death headers
        kit.publish(origins[n % 2], f'{{"n": {n}}}'.encode(), message_id=f"m{n}",
                    headers={"x-exception-stacktrace": EXCEPTIONS[n % 3] + f"\n\tat com.acme.H.run(H.java:{n % 3})"})
    kit.wait_depth(dlq, 40)
    (place,) = [p for p in do_discover(rabbit_broker, actor=operator) if p.name == dlq]

    assert run_job(request_job("capture", place=place, actor=operator, reason="capture").pk) == "succeeded"
    assert DeadLetter.objects.filter(place=place).count() == 40
    assert len(failure_groups({"place": place.pk})) == 6  # the origin is part of a failure's fingerprint
    assert_exact(place, "after the capture")

    replay = request_job("replay", actor=operator, reason="fixed", filter={"place": str(place.pk),
                                                                             "exception": "com.acme.CardDeclined"})
    assert run_job(replay.pk) == "succeeded"
    assert DeadLetter.objects.filter(place=place, state=LetterState.REPLAYED).count() == 14
    assert_exact(place, "after a replay")

    purged = list(DeadLetter.objects.filter(place=place, state=LetterState.HELD).order_by("id")
                  .values_list("id", flat=True)[:9])
    assert run_job(request_job("purge", actor=operator, reason="gdpr", ids=purged).pk) == "succeeded"
    assert_exact(place, "after a purge")

    # Retention deletes resolved letters with QuerySet.delete (console.pipeline.retention).
    DeadLetter.objects.filter(place=place, state__in=[LetterState.REPLAYED, LetterState.PURGED],
                              id__lt=sorted(purged)[5]).delete()
    assert_exact(place, "after retention")

    rows = GroupCount.objects.filter(place=place).count()
    assert fold() > 0
    assert GroupCount.objects.filter(place=place).count() < rows
    assert not GroupCount.objects.filter(letters=0).exists()
    assert_exact(place, "after folding")

    with connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # the test's transaction has checks pending
        cursor.execute("TRUNCATE console_deadletter CASCADE")  # by hand: nothing in custody, nothing counted
    assert failure_groups({"place": place.pk}) == [] and not GroupCount.objects.exists()
