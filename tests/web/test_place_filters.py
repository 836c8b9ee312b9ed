"""A place's letters: each filter narrows the list and stays in the query string; keyset pages."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from console.models import DeadLetter
from console.web.paging import PAGE_SIZE
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


def _ids(response) -> list[int]:
    return [int(i) for i in re.findall(r'name="ids" value="(\d+)"', response.content.decode())]


@pytest.fixture
def letters(place):
    return {
        "plain": store_letter(place, b'{"order": 1}', headers={"tenant": "acme"}),
        "timeout": store_letter(place, b"payment timeout for order 2", origin="payments", reason="expired",
                                headers={"tenant": "globex"}),
        "bad": store_letter(place, b"order 3 is malformed", headers={"tenant": "acme", "retry": 3},
                            exception_type="ValueError"),
    }


@pytest.mark.parametrize(
    "query, expected",
    [
        ({}, ["plain", "timeout", "bad"]),
        ({"origin": "payments"}, ["timeout"]),
        ({"reason": "rejected"}, ["plain", "bad"]),
        ({"header": "tenant", "header_value": "acme"}, ["plain", "bad"]),
        ({"header": "retry"}, ["bad"]),
        ({"q": "malformed"}, ["bad"]),
        ({"q": "order", "origin": "orders"}, ["plain", "bad"]),
    ],
)
def test_filters_narrow_the_letters(signed_in, place, letters, query, expected):
    response = signed_in.get(reverse("place", args=[place.pk]), query)
    assert _ids(response) == sorted((letters[name].pk for name in expected), reverse=True)  # newest first
    assert f"<strong>{len(expected)}</strong>" in response.content.decode()


def test_state_filter(signed_in, place, letters):
    DeadLetter.objects.filter(pk=letters["bad"].pk).update(state="failed")
    response = signed_in.get(reverse("place", args=[place.pk]), {"state": "failed"})
    assert _ids(response) == [letters["bad"].pk]


def test_only_this_places_letters_are_listed(signed_in, place, letters, memory_broker):
    other = memory_place(memory_broker, origin="billing")
    stranger = store_letter(other, b"order elsewhere")
    assert stranger.pk not in _ids(signed_in.get(reverse("place", args=[place.pk])))


def test_header_value_without_a_header_name_says_so(signed_in, place, letters):
    response = signed_in.get(reverse("place", args=[place.pk]), {"header_value": "acme"})
    assert response.status_code == 200
    assert "header_value needs header" in response.content.decode()


def test_pages_follow_by_id_and_keep_the_filter(signed_in, place):
    stored = [store_letter(place, f"order {i}".encode()).pk for i in range(PAGE_SIZE + 3)]
    first = signed_in.get(reverse("place", args=[place.pk]), {"q": "order"})
    newest_first = stored[::-1]
    assert _ids(first) == newest_first[:PAGE_SIZE]
    html = first.content.decode()
    assert f'href="?q=order&amp;after={newest_first[PAGE_SIZE - 1]}"' in html
    second = signed_in.get(reverse("place", args=[place.pk]), {"q": "order", "after": newest_first[PAGE_SIZE - 1]})
    assert _ids(second) == newest_first[PAGE_SIZE:]
    assert "Next page" not in second.content.decode()


def test_an_invalid_filter_value_is_reported_and_the_others_still_apply(signed_in, place, letters):
    response = signed_in.get(reverse("place", args=[place.pk]), {"state": "exploded", "origin": "payments"})
    assert _ids(response) == [letters["timeout"].pk]
    assert "must be states among held" in response.content.decode()
