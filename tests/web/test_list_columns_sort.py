"""Issue 46: list columns sort. The letters lists (a place's, a group's, the Letters page) are
newest first by default; the Captured, Count, Exception and Body headers sort by time, deaths,
exception type and size, the id breaking ties, and the keyset pages follow each order without
a letter missed or shown twice."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from console.models import DeadLetter
from console.web import paging
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


@pytest.fixture
def letters(memory_broker):
    place = memory_place(memory_broker)
    shapes = [(3, 10, "b.Timeout"), (1, 500, "a.KeyError"), (3, 40, "c.Boom"), (7, 40, "a.KeyError"),
              (1, 90, "b.Timeout")]
    return place, [store_letter(place, b"x" * size, exception_type=exception, death_count=deaths)
                   for deaths, size, exception in shapes]


def _ids(html: str) -> list[int]:
    return [int(i) for i in re.findall(r'name="ids" value="(\d+)"', html)]


def _walk(client, url: str, query: dict) -> list[int]:
    """Every page of the list, following its Next page links."""
    html = client.get(url, query).content.decode()
    seen = _ids(html)
    while found := re.findall(r'href="(\?[^"]*after=\d+[^"]*)">Next page', html):
        html = client.get(url + found[0].replace("&amp;", "&")).content.decode()
        seen += _ids(html)
    return seen


def _expected(made, key, descending: bool) -> list[int]:
    rows = DeadLetter.objects.filter(pk__in=[letter.pk for letter in made])
    return [row.pk for row in sorted(rows, key=lambda row: (key(row), row.pk), reverse=descending)]


@pytest.mark.parametrize(("sort", "key", "descending"), [
    (None, lambda row: 0, True),
    ("oldest", lambda row: 0, False),
    ("deaths", lambda row: row.death_count, True),
    ("size", lambda row: row.body_size, True),
    ("exception", lambda row: row.exception_type, False),
])
@pytest.mark.parametrize("where", ["place", "letters"])
def test_each_order_is_followed_page_by_page(signed_in, letters, monkeypatch, sort, key, descending, where):
    place, made = letters
    monkeypatch.setattr(paging, "PAGE_SIZE", 2)
    url = reverse("place", args=[place.pk]) if where == "place" else reverse("letters")
    assert _walk(signed_in, url, {"sort": sort} if sort else {}) == _expected(made, key, descending)


def test_the_headers_link_to_their_orders_and_say_which_is_on(signed_in, letters):
    place, _ = letters
    html = signed_in.get(reverse("place", args=[place.pk])).content.decode()
    assert 'aria-sort="descending"><a class="sort" href="?sort=oldest"' in html  # Captured, newest first now
    assert 'href="?sort=deaths"' in html and 'href="?sort=size"' in html and 'href="?sort=exception"' in html
    assert "Listed newest first." in html
    by_deaths = signed_in.get(reverse("place", args=[place.pk]), {"sort": "deaths", "exception": "keyerror"})
    assert "Listed most deaths first." in by_deaths.content.decode()
    assert 'name="sort" value="deaths"' in by_deaths.content.decode()  # kept when the filter changes
