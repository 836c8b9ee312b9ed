"""The place page's charts at every age: buckets as wide as the place is old, arrivals counted
from the captured letters, axes that say their units and a number to read."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from console.models import DeadLetter, PlaceSample
from tests.web.factory import store_letter

pytestmark = pytest.mark.django_db


def _capture(place, count: int, ago: timedelta, now=None) -> None:
    """``count`` letters stored by the custody service, as captured ``ago`` (before ``now``)."""
    ids = [store_letter(place).pk for _ in range(count)]
    DeadLetter.objects.filter(pk__in=ids).update(captured_at=(now or timezone.now()) - ago)


def _arrivals(html: str, title: str) -> list[tuple[str, str]]:
    """(when, letters) rows of the arrivals chart's numbers table."""
    table = html.split(f"{title}</caption>")[1].split("</table>")[0]
    return re.findall(r'<th scope="row">([^<]+)</th><td class="num">(\d+)</td>', table)


def _svg(html: str, title: str) -> str:
    return re.search(rf'<svg class="chart" role="img" aria-label="{re.escape(title)}".*?</svg>', html, re.S)[0]


def test_a_place_twenty_minutes_old_is_drawn_per_minute(signed_in, place):
    for minutes in range(0, 21, 2):
        _capture(place, 1, timedelta(minutes=minutes))
    html = signed_in.get(reverse("place", args=[place.pk])).content.decode()
    rows = _arrivals(html, "Arrivals in orders.dlq, per minute")
    assert 20 <= len(rows) <= 22  # a point a minute, not one dot
    assert sum(int(letters) for _, letters in rows) == 11
    assert sum(1 for _, letters in rows if letters == "1") == 11


@pytest.mark.parametrize(("age", "bucket", "points"), [
    (timedelta(hours=40), "hour", (40, 42)),
    (timedelta(days=20), "day", (20, 22)),
])
def test_an_older_place_is_drawn_per_hour_then_per_day(signed_in, place, age, bucket, points):
    _capture(place, 2, age)
    _capture(place, 1, timedelta(0))
    html = signed_in.get(reverse("place", args=[place.pk])).content.decode()
    rows = _arrivals(html, f"Arrivals in orders.dlq, per {bucket}")
    assert points[0] <= len(rows) <= points[1]
    assert [int(letters) for _, letters in rows if letters != "0"] == [2, 1]


def test_eight_then_three_captured_letters_count_eleven_in_their_minutes(signed_in, place):
    now = timezone.now()
    # The sampler's first sample of a place counts no arrivals: the chart does not read them.
    PlaceSample.objects.create(place=place, at=now - timedelta(minutes=11), depth=8, held=8, arrivals=0)
    PlaceSample.objects.create(place=place, at=now - timedelta(minutes=1), depth=0, held=11, arrivals=0)
    _capture(place, 8, timedelta(minutes=12), now)
    _capture(place, 3, timedelta(minutes=2), now)
    html = signed_in.get(reverse("place", args=[place.pk])).content.decode()
    counted = [(when, letters) for when, letters in _arrivals(html, "Arrivals in orders.dlq, per minute")
               if letters != "0"]
    minute = "%m-%d %H:%M"
    assert counted == [((now - timedelta(minutes=12)).strftime(minute), "8"),
                       ((now - timedelta(minutes=2)).strftime(minute), "3")]
    assert '<p class="chart-reading">11 letters captured since' in html


def test_each_chart_names_its_axes_and_gives_a_number_to_read(signed_in, place):
    now = timezone.now()
    PlaceSample.objects.create(place=place, at=now - timedelta(minutes=3), depth=5, held=2, arrivals=0)
    _capture(place, 4, timedelta(minutes=3))
    html = signed_in.get(reverse("place", args=[place.pk])).content.decode()
    depth, arrivals = _svg(html, "Depth of orders.dlq, per minute"), _svg(html, "Arrivals in orders.dlq, per minute")
    assert ">messages</text>" in depth and ">letters per minute</text>" in arrivals
    assert ">time (UTC), per minute</text>" in depth and ">time (UTC), per minute</text>" in arrivals
    assert '<p class="chart-reading">Now: 5 on the broker, 2 held in custody</p>' in html
    assert re.search(r'<p class="chart-reading">4 letters captured since \d\d-\d\d \d\d:\d\d UTC</p>', html)


def test_a_place_with_nothing_yet_says_so_in_each_chart(signed_in, place):
    html = signed_in.get(reverse("place", args=[place.pk])).content.decode()
    assert ">No samples of its depth yet (the scheduler takes them).</text>" in html
    assert ">No letters captured in the last 30 days.</text>" in html
    assert "chart-reading" not in html
