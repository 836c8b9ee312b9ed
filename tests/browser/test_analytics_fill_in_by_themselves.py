"""``make run`` answers before the demo's analytics are computed: ``manage.py demo
--analytics-later`` queues the pipeline's groups and analytics for the worker and ends at once.
Until a real Celery worker has computed them on Spark, the Analytics page says they are being
computed; then, in Chromium, the figures appear in the page the user has open, without a reload,
and the page stops asking."""

from __future__ import annotations

import time

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from console.models import AnalyticsRun, OutcomeStat
from tests.workers import Worker

pytestmark = [pytest.mark.spark, pytest.mark.browser, pytest.mark.django_db(transaction=True)]

COMPUTING = "The analytics are being computed, about half a minute"


def test_the_analytics_page_fills_in_by_itself_once_the_worker_has_computed_them(
        signed_in_page, filesystem_transport, tmp_path, capsys):
    started = time.monotonic()
    call_command("demo", "--no-rabbitmq", "--analytics-later")
    assert time.monotonic() - started < 30, "the demo command waited for Spark"
    assert "computed once on Spark by the worker" in capsys.readouterr().out
    assert not OutcomeStat.objects.exists()

    page = signed_in_page
    page.goto("/analytics/")
    expect(page.get_by_role("status")).to_contain_text(COMPUTING)
    page.evaluate("window.sameDocument = true")  # gone if the page were loaded again

    worker = Worker(filesystem_transport, tmp_path / "worker.log", DLO_LAKE_URL=str(tmp_path / "lake"))
    worker.start()
    try:
        expect(page.locator(".figures")).to_be_visible(timeout=240_000)
    except AssertionError as failure:
        raise AssertionError(f"the figures never showed:\n{worker.log()}") from failure
    finally:
        worker.kill()

    assert page.evaluate("window.sameDocument") is True, "the page was reloaded"
    expect(page.get_by_text(COMPUTING)).to_have_count(0)
    expect(page.locator(".figures")).to_contain_text("12")  # the demo's letters
    expect(page.locator("svg.chart").first).to_be_visible()
    assert page.locator("#analytics-body").get_attribute("hx-trigger") is None, "the page still asks"
    assert not AnalyticsRun.objects.filter(ended_at__isnull=True).exists()
    assert not page.watch.errors
