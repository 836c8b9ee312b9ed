"""Server-drawn SVG charts: hostile labels are escaped, nothing executable, a table of the numbers."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from console.models import PlaceSample
from console.web.charts import Series, line_chart
from tests.web.factory import XSS_IMG, XSS_SCRIPT, memory_place, store_letter

pytestmark = pytest.mark.django_db

HOSTILE = f'{XSS_SCRIPT}"><{XSS_IMG}'


def _svgs(html: str) -> list[str]:
    return re.findall(r'<svg class="chart".*?</svg>', html, flags=re.S)


def test_a_chart_escapes_its_title_and_series_labels():
    now = timezone.now()
    chart = line_chart(HOSTILE, [Series(HOSTILE, [(now - timedelta(hours=1), 3), (now, 5)])])
    svg = str(chart.svg)
    assert "<script" not in svg and "<img" not in svg and "onerror=alert(1)>" not in svg
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;" in svg
    assert f'aria-label="{chart.title}"' not in svg  # the raw title never lands in an attribute
    assert [row[1:] for row in chart.rows] == [["3"], ["5"]]


def test_the_groups_chart_with_a_hostile_exception_and_origin_renders_as_text(signed_in, memory_broker):
    place = memory_place(memory_broker, origin="evil")
    for _ in range(2):
        store_letter(place, origin=HOSTILE, exception_type=HOSTILE, exception_message=XSS_IMG)
    html = signed_in.get(reverse("place-groups", args=[place.pk])).content.decode()
    (svg,) = _svgs(html)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in svg  # the legend names the group
    assert "<script" not in svg and "<img" not in svg
    body = html.split("<main>")[1]
    assert "<script" not in body and "<img" not in body
    assert "&lt;img src=x onerror=alert(1)&gt;" in body  # origin and message, as text


def test_the_place_page_draws_depth_and_custody_from_samples(signed_in, place):
    now = timezone.now()
    for minutes, depth, held in ((120, 4, 4), (60, 6, 2), (5, 1, 0)):
        PlaceSample.objects.create(place=place, at=now - timedelta(minutes=minutes), depth=depth, held=held)
    html = signed_in.get(reverse("place", args=[place.pk])).content.decode()
    depth_svg, arrivals_svg = _svgs(html)
    assert 'aria-label="Depth of orders.dlq, per 5 minutes"' in depth_svg
    assert depth_svg.count("<polyline") == 2 and arrivals_svg.count("<polyline") == 1
    assert "<summary>Numbers</summary>" in html
    table = html.split('Depth of orders.dlq, per 5 minutes</caption>')[1].split("</table>")[0]
    assert re.findall(r'<td class="num">(\d+)</td>', table) == ["4", "4", "6", "2", "1", "0"]


@pytest.mark.parametrize("width", [320, 640, 960])
def test_time_labels_never_overlap_however_the_points_cluster(width):
    """Issue 46: "11-28 13:2811-28 13:34". Points six minutes apart among hours: the labels are
    spread in time, at least a label's width apart, on any width."""
    start = timezone.now().replace(second=0, microsecond=0) - timedelta(hours=5)
    points = [(start, 1), *[(start + timedelta(hours=5, minutes=minute), 2) for minute in (0, 6, 7, 8)]]
    svg = str(line_chart("depth", [Series("orders.dlq", points)], width=width).svg)
    ticks = re.findall(r'<text class="axis" x="([\d.]+)" y="[\d.]+" text-anchor="(\w+)">(\d\d-\d\d \d\d:\d\d)</text>',
                       svg)
    assert ticks
    char = 6.3
    spans = []
    for x, anchor, text in ticks:
        x, w = float(x), len(text) * char
        spans.append({"start": (x, x + w), "middle": (x - w / 2, x + w / 2), "end": (x - w, x)}[anchor])
    assert all(left[1] <= right[0] for left, right in zip(spans, spans[1:], strict=False)), ticks
    assert all(0 <= begin and end <= width for begin, end in spans)
