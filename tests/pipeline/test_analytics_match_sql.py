"""analytics: every figure, per failure group, per origin and over all letters, equals what SQL
computes on its own from the same letters and audit events in PostgreSQL (a different engine,
and a different formulation: NOT EXISTS where Spark runs a window), with part of the history
archived and part still in custody; a letter deleted from custody after archiving still counts."""

from __future__ import annotations

from datetime import timedelta
from unittest import mock

import pytest
from django.db import connection, transaction

from console.jobs.kinds import resolving
from console.models import ArrivalCell, BusyName, DeadLetter, OutcomeStat
from console.pipeline.analytics import run_analytics
from console.pipeline.archive import archive
from console.services import audit
from tests.pipeline.conftest import NOW

pytestmark = [pytest.mark.spark, pytest.mark.django_db]

LETTERS_SQL = """
WITH events AS (
    SELECT unnest(letter_ids) AS id, at, CASE WHEN action = 'mark_failed' THEN 'failed' ELSE 'replayed' END AS became
    FROM console_auditevent
    WHERE (action IN ('replay', 'archive_replay', 'move') AND outcome = 'confirmed')
       OR (action = 'mark_failed' AND outcome = 'failed')
), first AS (
    SELECT DISTINCT ON (id) id, at, became FROM events ORDER BY id, at
)
SELECT l.id, l.fingerprint, b.name AS broker, l.origin_queue, f.became, l.captured_at,
       CASE WHEN f.at IS NOT NULL
            THEN GREATEST(0, floor(extract(epoch FROM f.at - COALESCE(l.first_failed_at, l.captured_at)) / 60))::bigint
       END AS minutes,
       f.became = 'replayed' AND EXISTS (SELECT 1 FROM console_deadletter c WHERE c.parent_id = l.id) AS came_back,
       EXISTS (SELECT 1 FROM console_deadletter e WHERE e.fingerprint = l.fingerprint
                                                   AND (e.captured_at, e.id) < (l.captured_at, l.id))
       AND NOT EXISTS (SELECT 1 FROM console_deadletter e LEFT JOIN first fe ON fe.id = e.id
                       WHERE e.fingerprint = l.fingerprint AND (e.captured_at, e.id) < (l.captured_at, l.id)
                         AND (fe.at IS NULL OR fe.at >= l.captured_at)) AS recurred
FROM console_deadletter l JOIN console_broker b ON b.id = l.broker_id LEFT JOIN first f ON f.id = l.id
"""
FIGURES = """
count(*), count(minutes), count(*) FILTER (WHERE became = 'replayed'), count(*) FILTER (WHERE became = 'failed'),
count(*) FILTER (WHERE came_back), count(*) FILTER (WHERE recurred),
percentile_cont(0.5) WITHIN GROUP (ORDER BY minutes), percentile_cont(0.9) WITHIN GROUP (ORDER BY minutes)
"""
BY_GROUP = f"WITH per_letter AS ({LETTERS_SQL}) SELECT fingerprint, {FIGURES} FROM per_letter GROUP BY 1"
BY_ORIGIN = f"WITH per_letter AS ({LETTERS_SQL}) SELECT broker, origin_queue, {FIGURES} FROM per_letter GROUP BY 1, 2"
OVER_ALL = f"WITH per_letter AS ({LETTERS_SQL}) SELECT {FIGURES} FROM per_letter"
BUSIEST = {
    "origin": """SELECT l.origin_queue, b.name, count(*), count(DISTINCT l.fingerprint) FROM console_deadletter l
                 JOIN console_broker b ON b.id = l.broker_id WHERE l.origin_queue <> '' GROUP BY 1, 2""",
    "consumer": """SELECT envelope_details->>'consumer', '', count(*), count(DISTINCT fingerprint)
                   FROM console_deadletter WHERE COALESCE(envelope_details->>'consumer', '') <> '' GROUP BY 1""",
    "host": """SELECT envelope_details->>'host', '', count(*), count(DISTINCT fingerprint) FROM console_deadletter
               WHERE COALESCE(envelope_details->>'host', '') <> '' GROUP BY 1""",
}
ARRIVALS = """SELECT extract(isodow FROM captured_at AT TIME ZONE 'UTC')::int,
                     extract(hour FROM captured_at AT TIME ZONE 'UTC')::int,
                     count(*) FROM console_deadletter GROUP BY 1, 2"""

FIGURE_FIELDS = ("letters", "resolved", "replayed", "failed", "came_back", "recurrences", "median_minutes",
                 "p90_minutes")


def sql(query: str) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(query)
        return cursor.fetchall()


def rounded(figures: tuple) -> tuple:
    """Percentiles to a millionth of a minute: two engines may differ in a double's last bits."""
    return tuple(round(value, 6) if isinstance(value, float) else value for value in figures)


def resolve(action: str, outcome: str, letters, at) -> None:
    """An audit event of ``action`` naming ``letters``, recorded at the moment ``at``, and the
    letters still held changed as that action would change them."""
    became = resolving().get((action, outcome))
    with transaction.atomic(), mock.patch("django.utils.timezone.now", return_value=at):
        audit.record(action, actor="tests", letter_ids=[letter.pk for letter in letters], outcome=outcome,
                     reason="analytics test")
        if became:
            DeadLetter.objects.filter(pk__in=[letter.pk for letter in letters], state="held").update(
                state=became, state_changed_at=at)


def expected() -> dict:
    return {
        "group": {row[0]: rounded(row[1:]) for row in sql(BY_GROUP)},
        "origin": {(row[0], row[1]): rounded(row[2:]) for row in sql(BY_ORIGIN)},
        "all": {(): rounded(sql(OVER_ALL)[0])},
        "busiest": {kind: sorted(sql(query)) for kind, query in BUSIEST.items()},
        "arrivals": sorted(sql(ARRIVALS)),
    }


def stored() -> dict:
    figures = lambda o: rounded(tuple(getattr(o, name) for name in FIGURE_FIELDS))  # noqa: E731
    outcomes = OutcomeStat.objects.all()
    return {
        "group": {o.fingerprint: figures(o) for o in outcomes if o.kind == "group"},
        "origin": {(o.broker, o.origin): figures(o) for o in outcomes if o.kind == "origin"},
        "all": {(): figures(o) for o in outcomes if o.kind == "all"},  # noqa: B035 - one row, or none
        "busiest": {kind: sorted((b.name, b.broker, b.letters, b.groups) for b in BusyName.objects.filter(kind=kind))
                    for kind in BUSIEST},
        "arrivals": sorted(ArrivalCell.objects.values_list("weekday", "hour", "letters")),
    }


def test_analytics_match_sql_on_the_same_letters(spark, lake, custody):
    east, west = custody.broker(name="east"), custody.broker(name="west", url="memory://west")
    orders_east, orders_west = custody.place(east, "orders.dlq"), custody.place(west, "orders.dlq")
    hours = lambda h: NOW - timedelta(hours=h)  # noqa: E731

    # Timeouts on orders, on both brokers: replayed at different speeds, two came back.
    timeouts = [custody.letter(orders_east if i % 3 else orders_west, exception="TimeoutError", message="timeout",
                               captured_days_ago=(100 - i) / 24,
                               details={"consumer": f"c-{i % 2}", "host": f"web-{i % 3}"})
                for i in range(12)]
    resolve("replay", "confirmed", timeouts[:4], hours(90))
    resolve("replay", "confirmed", timeouts[4:6], hours(80))
    resolve("move", "confirmed", timeouts[6:7], hours(70))
    resolve("replay", "refused", timeouts[7:9], hours(69))  # not a resolution
    resolve("mark_failed", "failed", timeouts[8:9], hours(60))
    resolve("replay", "confirmed", timeouts[:1], hours(10))  # again: the first resolution counts
    for parent in timeouts[1:3]:
        custody.letter(orders_east, exception="TimeoutError", message="timeout", captured_days_ago=85 / 24,
                       parent_id=parent.pk, details={"consumer": "c-0"})

    # KeyError on billing: all dealt with, then it came back twice (two recurrences).
    billing = [custody.letter(orders_east, origin="billing", exception="KeyError", message="'sku'",
                              captured_days_ago=(200 - i) / 24, first_failed_at=hours(205 - i)) for i in range(4)]
    resolve("mark_failed", "failed", billing[:2], hours(190))
    resolve("replay", "confirmed", billing[2:], hours(150))
    archive(lake, spark=spark)
    again = custody.letter(orders_east, origin="billing", exception="KeyError", message="'sku'", captured_days_ago=5)
    resolve("replay", "confirmed", [again], hours(100))
    custody.letter(orders_east, origin="billing", exception="KeyError", message="'sku'", captured_days_ago=3)
    custody.letter(orders_west, origin="billing", exception="KeyError", message="'sku'", captured_days_ago=2.9)
    # Expired letters, never resolved.
    for i in range(3):
        custody.letter(orders_west, origin="stock", reason="expired", captured_days_ago=i / 7,
                       details={"host": "web-9"})

    assert run_analytics(lake, resolving=resolving(), spark=spark) == DeadLetter.objects.count() == 24
    want = expected()
    assert stored() == want
    # The test means something: each figure is there, somewhere.
    everything = want["all"][()]
    assert everything[:6] == (24, 13, 10, 3, 2, 2), everything
    assert everything[6] is not None and everything[7] > everything[6]

    # Deleted from custody after archiving (retention does that): the history keeps it.
    DeadLetter.objects.filter(pk=billing[0].pk).delete()
    run_analytics(lake, resolving=resolving(), spark=spark)
    assert stored() == want
