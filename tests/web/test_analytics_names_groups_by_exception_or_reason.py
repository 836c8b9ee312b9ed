"""The analytics page names a failure group by its exception type, or by why its letters died when
they name no exception, even when the pipeline's ``groups`` job (which keeps the groups' history)
has not run yet: the ``analytics`` job runs apart from it. The history page's chart names them
the same way."""

from __future__ import annotations

import pytest
from django.urls import reverse
from django.utils import timezone

from console.models import FailureGroupDay, FailureGroupHistory, OutcomeStat
from tests.web.factory import store_letter

pytestmark = pytest.mark.django_db

# Resolved ones, so the chart of times to resolution draws each group.
FIGURES = {"resolved": 1, "replayed": 1, "failed": 0, "came_back": 0, "recurrences": 0, "median_minutes": 90,
           "p90_minutes": 120}


def _analytics_ran(*groups) -> None:
    """What the analytics job stores: the figures over all letters and per group."""
    now = timezone.now()
    OutcomeStat.objects.create(kind="all", letters=sum(count for _, count in groups), computed_at=now, **FIGURES)
    for letter, count in groups:
        OutcomeStat.objects.create(kind="group", fingerprint=letter.fingerprint, letters=count, computed_at=now,
                                   **FIGURES)


def test_groups_are_named_by_exception_type_else_reason(signed_in, place):
    timeout = store_letter(place, b"a", exception_type="java.util.concurrent.TimeoutException")
    expired = store_letter(place, b"b", reason="expired")
    _analytics_ran((timeout, 2), (expired, 1))
    assert not FailureGroupHistory.objects.exists()

    html = signed_in.get(reverse("analytics")).content.decode()
    assert f"java.util.concurrent.TimeoutException [{timeout.fingerprint[:8]}]" in html
    assert f"expired [{expired.fingerprint[:8]}]" in html
    assert "no exception" not in html


def test_the_history_chart_names_a_group_without_exception_by_its_reason(signed_in):
    now = timezone.now()
    for fingerprint, exception_type, reason in (("a" * 16, "KeyError", "rejected"), ("b" * 16, "", "expired")):
        group = FailureGroupHistory.objects.create(fingerprint=fingerprint, exception_type=exception_type,
                                                   reason=reason, count=1, first_seen=now, last_seen=now,
                                                   computed_at=now)
        FailureGroupDay.objects.create(group=group, day=now.date(), count=1)

    html = signed_in.get(reverse("groups-history")).content.decode()
    assert "KeyError [aaaaaaaa]" in html and "expired [bbbbbbbb]" in html
