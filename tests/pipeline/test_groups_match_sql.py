"""groups: per fingerprint over lake + unarchived custody, the same numbers as SQL on custody;
letters deleted from custody after archiving still count."""

from __future__ import annotations

import pytest
from django.db import connection

from console.models import DeadLetter, FailureGroupDay, FailureGroupHistory
from console.pipeline.archive import archive
from console.pipeline.groups import run_groups
from console.services.history import history_groups

pytestmark = [pytest.mark.spark, pytest.mark.django_db]

SQL = """
SELECT fingerprint, count(*), min(COALESCE(last_failed_at, captured_at)), max(COALESCE(last_failed_at, captured_at)),
       array_agg(DISTINCT origin_queue ORDER BY origin_queue),
       array_remove(array_agg(DISTINCT envelope_details->>'consumer'), NULL),
       array_remove(array_agg(DISTINCT envelope_details->>'host'), NULL),
       (array_agg(exception_message ORDER BY id))[1]
FROM console_deadletter GROUP BY fingerprint
"""
DAYS_SQL = """
SELECT fingerprint, (COALESCE(last_failed_at, captured_at) AT TIME ZONE 'UTC')::date, count(*)
FROM console_deadletter GROUP BY 1, 2
"""


def stored() -> dict:
    return {g.fingerprint: (g.count, g.first_seen, g.last_seen, g.origins, sorted(g.consumers), sorted(g.hosts),
                            g.sample_message) for g in FailureGroupHistory.objects.all()}


def test_groups_match_counts_computed_in_sql(spark, lake, custody):
    broker = custody.broker()
    place = custody.place(broker, "orders.dlq")
    for i in range(6):
        custody.letter(place, exception="System.TimeoutException", message=f"timeout after {i}s",
                       captured_days_ago=i % 3, details={"consumer": "OrderConsumer", "host": f"web-{i % 2}"})
    for i in range(3):
        custody.letter(place, origin="billing", exception="System.TimeoutException", message="timeout after 1s",
                       captured_days_ago=i)
    custody.letter(place, origin="billing", reason="expired")
    archive(lake, spark=spark)
    # Not archived yet: must be counted from custody.
    custody.letter(place, exception="System.TimeoutException", message="timeout after 9s",
                   details={"consumer": "OtherConsumer"})
    custody.letter(place, origin="shipping", exception="KeyError", message="'sku'")

    assert run_groups(lake, spark=spark) == 4
    with connection.cursor() as cursor:
        cursor.execute(SQL)
        expected = {row[0]: (row[1], row[2], row[3], row[4], sorted(row[5]), sorted(row[6]), row[7])
                    for row in cursor.fetchall()}
        cursor.execute(DAYS_SQL)
        expected_days = sorted(cursor.fetchall())
    assert stored() == expected
    assert sorted(FailureGroupDay.objects.values_list("group__fingerprint", "day", "count")) == expected_days

    # Deleted from custody after archiving (retention does that): the history keeps it.
    DeadLetter.objects.filter(origin_queue="orders").order_by("id").first().delete()
    run_groups(lake, spark=spark)
    assert stored() == expected

    top = history_groups(days=7)[0]
    assert (top["count"], top["exception_type"], top["consumers"]) == (7, "System.TimeoutException",
                                                                       ["OrderConsumer", "OtherConsumer"])
    assert len(top["trend"]) == 7 and sum(count for _, count in top["trend"]) == 7
