"""Issue 51: the analytics count each objective's attainment per week, back as far as the
history goes (letters and audit events in the lake, and those of custody not archived yet),
and equal a count done here by hand over the same letters: per week of capture (Monday, UTC),
the letters whose outcome is known (resolved, or open longer than D) and those resolved within
D, resolved being the first confirmed replay or move, or marked failed. An objective on an
origin counts its letters in every place of its broker; the Analytics page shows the weeks."""

from __future__ import annotations

import random
from datetime import UTC, timedelta

import pytest
from django.utils import timezone

from console.jobs.kinds import resolving
from console.models import ObjectiveWeek, Origin
from console.pipeline.analytics import run_analytics
from console.pipeline.archive import archive
from console.services.objectives import do_set_objective
from tests.pipeline.conftest import NOW
from tests.pipeline.test_analytics_match_sql import resolve

pytestmark = [pytest.mark.spark, pytest.mark.django_db]

HOUR = 3600


def by_hand(letters: list[tuple], seconds: int, now) -> dict:
    """(week's Monday, known, in time) per week, from (captured, resolved or None) pairs."""
    weeks: dict = {}
    for captured, resolved in letters:
        monday = (captured.astimezone(UTC) - timedelta(days=captured.astimezone(UTC).weekday())).date()
        known, in_time = weeks.get(monday, (0, 0))
        is_known = resolved is not None or captured < now - timedelta(seconds=seconds)
        weeks[monday] = (known + is_known,
                         in_time + (resolved is not None and (resolved - captured).total_seconds() <= seconds))
    return weeks


def test_each_objectives_weeks_equal_a_count_by_hand(spark, lake, custody, operator, client):
    east = custody.broker(name="east")
    orders, payments = custody.place(east, "orders.dlq"), custody.place(east, "payments.dlq")
    rng = random.Random(51)
    seeded: dict[str, list[tuple]] = {"orders": [], "billing": []}
    archived_half = None
    for n in range(60):
        place = orders if n % 3 else payments
        origin = "billing" if n % 2 else "shipping"
        # Away from the edges: never within minutes of D, of now, or of a week's start.
        days_ago = 1 + (n * 0.37) % 25 + rng.choice([0.1, 0.3])
        letter = custody.letter(place, origin=origin, exception="TimeoutError", captured_days_ago=days_ago)
        captured = NOW - timedelta(days=days_ago)
        resolved = None
        if n % 5:  # four in five resolved, some within the hour, some within two, some late
            took = rng.choice([0.5, 1.5, 3, 30]) * HOUR
            resolved = captured + timedelta(seconds=took)
            action = rng.choice([("replay", "confirmed"), ("move", "confirmed"), ("mark_failed", "failed")])
            resolve(*action, [letter], resolved)
            if n % 7 == 0:  # a later resolution does not count: the first one does
                resolve("replay", "confirmed", [letter], resolved + timedelta(hours=5))
        elif n % 10 == 0:
            resolve("replay", "refused", [letter], captured + timedelta(minutes=10))  # not a resolution
        if place == orders:
            seeded["orders"].append((captured, resolved))
        if origin == "billing":
            seeded["billing"].append((captured, resolved))
        if n == 30:
            archive(lake, spark=spark)  # the first half in the lake, the rest in custody
            archived_half = True
    assert archived_half
    young = NOW - timedelta(days=0.02)  # 29 minutes: its outcome not known yet for either objective
    custody.letter(orders, origin="billing", exception="TimeoutError", captured_days_ago=0.02)
    seeded["orders"].append((young, None))
    seeded["billing"].append((young, None))
    on_place = do_set_objective(actor=operator, name="orders within the hour", kind="resolved", seconds=HOUR,
                                percent=90, place=orders)
    billing = Origin.objects.create(broker=east, scope="", name="billing")
    on_origin = do_set_objective(actor=operator, name="billing within two hours", kind="oldest", seconds=2 * HOUR,
                                 origin=billing)

    run_analytics(lake, resolving=resolving(), spark=spark)
    now = timezone.now()
    for objective, letters in ((on_place, seeded["orders"]), (on_origin, seeded["billing"])):
        stored = {week.week: (week.known, week.in_time) for week in ObjectiveWeek.objects.filter(objective=objective)}
        assert stored == by_hand(letters, objective.seconds, now), objective.name
        assert len(stored) >= 3 and sum(known for known, _ in stored.values()) > sum(t for _, t in stored.values()) > 0

    client.force_login(operator)
    page = client.get("/analytics/").content.decode()
    assert "Objectives, week by week" in page and "orders within the hour" in page
    latest = ObjectiveWeek.objects.filter(objective=on_place).order_by("-week").first()
    assert latest.week.isoformat() in page and f"{latest.percent}%" in page
