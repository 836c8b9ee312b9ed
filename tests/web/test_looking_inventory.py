"""The inventory dashboard: health from the database, trends from samples, a partial for htmx."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from console.models import Broker, PlaceSample
from tests.web.factory import store_letter

pytestmark = pytest.mark.django_db


def test_the_dashboard_shows_depth_arrivals_trend_health_and_capabilities(signed_in, place):
    store_letter(place)
    store_letter(place)
    now = timezone.now()
    for minutes, depth in ((40, 3), (20, 9), (1, 5)):
        PlaceSample.objects.create(place=place, at=now - timedelta(minutes=minutes), depth=depth, held=2, arrivals=1)
    PlaceSample.objects.create(place=place, at=now - timedelta(hours=3), depth=99, held=0, arrivals=50)
    html = signed_in.get(reverse("inventory")).content.decode()
    assert '<span class="tag health-up">up</span>' in html
    assert 'aria-label="Arrivals in orders.dlq over the last hour"' in html
    # Three samples in the last hour make three points; the older one is left out.
    sparkline = html.split('aria-label="Arrivals in orders.dlq over the last hour"')[1].split("</svg>")[0]
    assert sparkline.count(",") == 3
    assert '<td class="num">2</td>' in html  # arrivals in the last hour and held
    assert "Browse without changing messages: yes" in html
    assert 'hx-get="/"' in html and 'hx-trigger="every 10s"' in html


def test_the_htmx_partial_is_only_the_changing_part(signed_in, place):
    html = signed_in.get(reverse("inventory"), headers={"HX-Request": "true"}).content.decode()
    assert "orders.dlq" in html and "<html" not in html and "<h1>" not in html
    assert "refreshes every 10 seconds" in html


def test_a_broker_that_is_down_shows_as_down_and_the_page_never_calls_it(signed_in, place, memory_broker, monkeypatch):
    fake, broker = memory_broker
    fake.down = True
    Broker.objects.filter(pk=broker.pk).update(reachable=False, last_error="memory broker is down")

    def no_calls(self):
        raise AssertionError("the dashboard asked the broker")

    monkeypatch.setattr(Broker, "adapter", no_calls)
    for headers in ({}, {"HX-Request": "true"}):
        response = signed_in.get(reverse("inventory"), headers=headers)
        html = response.content.decode()
        assert response.status_code == 200
        assert '<span class="tag health-down">down</span>' in html
        assert "Last error: memory broker is down" in html
        assert "orders.dlq" in html


def test_a_hostile_place_name_is_escaped_in_the_sparkline(signed_in, place):
    place.name = '<script>alert(1)</script>"><img src=x onerror=alert(2)>'
    place.save()
    PlaceSample.objects.create(place=place, at=timezone.now(), depth=1, held=0, arrivals=0)
    html = signed_in.get(reverse("inventory")).content.decode()
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img" in html
