"""The failure groups of the whole history, as the pipeline's groups job wrote them."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from console.models import FailureGroupDay, FailureGroupHistory

pytestmark = pytest.mark.django_db


def _group(fingerprint: str, count: int, exception: str, days: dict[int, int]) -> FailureGroupHistory:
    now = timezone.now()
    group = FailureGroupHistory.objects.create(
        fingerprint=fingerprint, exception_type=exception, reason="rejected", sample_message="<b>boom</b>",
        count=count, first_seen=now - timedelta(days=20), last_seen=now, origins=["orders"],
        brokers=["rabbit"], consumers=["BillingConsumer"], hosts=["worker-7"], computed_at=now,
    )
    for ago, n in days.items():
        FailureGroupDay.objects.create(group=group, day=(now - timedelta(days=ago)).date(), count=n)
    return group


def test_history_lists_groups_largest_first_with_a_chart_and_escapes_their_text(signed_in):
    _group("a" * 16, 7, "<script>alert(1)</script>", {0: 3, 2: 4})
    _group("b" * 16, 40, "java.lang.IllegalStateException", {1: 40})
    html = signed_in.get(reverse("groups-history")).content.decode()
    assert html.index("b" * 16) < html.index("a" * 16)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>alert" not in html
    assert "&lt;b&gt;boom&lt;/b&gt;" in html and "BillingConsumer" in html and "worker-7" in html
    assert "<svg" in html and "largest groups of the whole history" in html


def test_without_a_pipeline_run_the_page_says_how_to_fill_it(signed_in):
    html = signed_in.get(reverse("groups-history")).content.decode()
    assert "No history yet" in html and "pipeline groups" in html


def test_the_groups_page_links_to_the_history(signed_in):
    assert reverse("groups-history") in signed_in.get(reverse("groups")).content.decode()
