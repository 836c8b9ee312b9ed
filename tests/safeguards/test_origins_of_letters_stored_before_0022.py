"""Letters stored before migration 0022 get their origins (no streak, breaker closed), one per
broker, scope and origin queue; origins that exist already keep their streak and breaker."""

from __future__ import annotations

import importlib

import pytest
from django.db import connection

from console.models import Origin
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db

BACKFILL = importlib.import_module("console.migrations.0022_safeguards").BACKFILL


def test_every_origin_of_a_stored_letter_is_made_once_and_kept_ones_are_untouched(memory_broker):
    place = memory_place(memory_broker)
    for origin, exception in (("orders", "Timeout"), ("orders", "Timeout"), ("billing", ""), ("", "")):
        store_letter(place, origin=origin, exception_type=exception)
    Origin.objects.filter(name="billing").delete()  # as if stored before there were origins

    with connection.cursor() as cursor:
        cursor.execute(BACKFILL)

    origins = {o.name: o for o in Origin.objects.all()}
    assert sorted(origins) == ["billing", "orders"]
    assert (origins["billing"].streak_any, origins["billing"].breaker_open) == (0, False)
    assert (origins["orders"].streak_any, origins["orders"].streak_exception) == (2, "Timeout")
