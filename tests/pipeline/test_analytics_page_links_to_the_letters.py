"""The analytics page and /api/analytics/ after a real analytics run: the figures the pipeline
stored, charts drawn as SVG, and each number a link to the letters behind it, which the
letters page lists across places (followed here: the heat map's cell, came back, a consumer).
A user limited to some places sees none of it."""

from __future__ import annotations

import re
from datetime import timedelta
from html import unescape

import pytest
from django.urls import reverse

from console.jobs.kinds import resolving
from console.models import DeadLetter, OutcomeStat, RoleScope
from console.pipeline.analytics import run_analytics
from tests.pipeline.test_analytics_match_sql import resolve

pytestmark = [pytest.mark.spark, pytest.mark.django_db]


def listed_ids(client, url: str) -> set[int]:
    html = client.get(url).content.decode()
    return {int(found) for found in re.findall(r'<td><a href="/letters/(\d+)/">', html)}


def test_every_figure_links_to_its_letters(spark, lake, custody, client, operator, django_user_model):
    from tests.pipeline.conftest import NOW

    place = custody.place(custody.broker(), "orders.dlq")
    other = custody.place(custody.broker(name="west", url="memory://west"), "billing.dlq")
    first = [custody.letter(place, exception="TimeoutError", captured_days_ago=3 + i / 24,
                            details={"consumer": "<b>OrderConsumer</b>", "host": "web-1"}) for i in range(5)]
    resolve("replay", "confirmed", first, NOW - timedelta(days=1))
    back = custody.letter(place, exception="TimeoutError", captured_days_ago=0.5, parent_id=first[0].pk)
    custody.letter(other, origin="billing", exception="KeyError", captured_days_ago=1)
    assert run_analytics(lake, resolving=resolving(), spark=spark) == 7

    client.force_login(operator)
    html = client.get(reverse("analytics")).content.decode()
    assert html.count("<svg") >= 3 and "Arrivals by weekday and hour" in html
    assert "&lt;b&gt;OrderConsumer&lt;/b&gt;" in html and "<b>OrderConsumer" not in html
    overall = OutcomeStat.objects.get(kind="all")
    assert (overall.letters, overall.resolved, overall.came_back, overall.recurrences) == (7, 5, 1, 1)

    # A heat map cell lists the letters that arrived on that weekday, in that hour (UTC).
    arrived = DeadLetter.objects.get(pk=back.pk).captured_at
    cell = f"/letters/?weekday={arrived.isoweekday()}&amp;hour={arrived.hour}"
    assert cell in html
    same_hour = {letter.pk for letter in DeadLetter.objects.all()
                 if (letter.captured_at.isoweekday(), letter.captured_at.hour) == (arrived.isoweekday(), arrived.hour)}
    assert back.pk in listed_ids(client, unescape(cell)) == same_hour

    # Came back: the replayed letter whose replay died again.
    came_back = re.search(r'<dt>Replayed, came back</dt><dd><a href="([^"]+)">1</a>', html).group(1)
    assert listed_ids(client, unescape(came_back)) == {first[0].pk}
    # The busiest consumer: its letters, in every place.
    consumer = re.search(r'<a href="(/letters/\?consumer=[^"]+)">5</a>', html).group(1)
    assert listed_ids(client, unescape(consumer)) == {letter.pk for letter in first}

    api = client.get("/api/analytics/").json()
    assert api["limited"] is False and api["overall"]["came_back"] == 1
    assert {row["fingerprint"]: row["letters"] for row in api["groups"]} == {
        first[0].fingerprint: 6, DeadLetter.objects.get(place=other).fingerprint: 1}
    assert sum(cell["letters"] for cell in api["arrivals"]) == 7

    # Limited to one place: nothing of the whole history, page or API.
    RoleScope.objects.create(user=operator, place=place)
    assert "your access is limited" in client.get(reverse("analytics")).content.decode()
    assert client.get("/api/analytics/").json() == {"limited": True, "computing": False, "computed_at": None,
                                                    "overall": None, "groups": [], "origins": [], "busiest": {},
                                                    "arrivals": [], "objective_weeks": []}
