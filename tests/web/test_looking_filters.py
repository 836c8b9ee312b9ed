"""A place's filters: exception, failure group, age, combined, kept in the URL; bounded counts."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from console.models import DeadLetter
from console.web import letter_lists, paging
from tests.web.factory import store_letter

pytestmark = pytest.mark.django_db


def _ids(response) -> list[int]:
    return [int(i) for i in re.findall(r'name="ids" value="(\d+)"', response.content.decode())]


@pytest.fixture
def letters(place):
    made = {
        "old_key": store_letter(place, b"customer 7 missing", exception_type="KeyError",
                                exception_message="'customer_7'", headers={"tenant": "acme"}),
        "new_key": store_letter(place, b"customer 8 missing", exception_type="KeyError",
                                exception_message="'customer_7'", headers={"tenant": "globex"}),
        "timeout": store_letter(place, b"slow", exception_type="TimeoutError", headers={"tenant": "acme"}),
    }
    DeadLetter.objects.filter(pk=made["old_key"].pk).update(captured_at=timezone.now() - timedelta(hours=30))
    return made


def test_exception_and_failure_group_filters(signed_in, place, letters):
    url = reverse("place", args=[place.pk])
    assert _ids(signed_in.get(url, {"exception": "KeyError"})) == [letters["new_key"].pk, letters["old_key"].pk]
    fingerprint = letters["timeout"].fingerprint
    assert _ids(signed_in.get(url, {"fingerprint": fingerprint})) == [letters["timeout"].pk]


def test_age_presets_and_ranges(signed_in, place, letters):
    url = reverse("place", args=[place.pk])
    assert _ids(signed_in.get(url, {"older_than": "24"})) == [letters["old_key"].pk]
    assert _ids(signed_in.get(url, {"older_than": "1"})) == [letters["old_key"].pk]
    local = timezone.localtime(timezone.now() - timedelta(hours=2)).strftime("%Y-%m-%dT%H:%M")
    assert _ids(signed_in.get(url, {"since": local})) == [letters["timeout"].pk, letters["new_key"].pk]
    assert _ids(signed_in.get(url, {"until": local})) == [letters["old_key"].pk]


def test_filters_combine_and_stay_in_the_form(signed_in, place, letters):
    query = {"exception": "KeyError", "header": "tenant", "header_value": "globex", "q": "customer"}
    response = signed_in.get(reverse("place", args=[place.pk]), query)
    assert _ids(response) == [letters["new_key"].pk]
    html = response.content.decode()
    for name, value in query.items():
        assert f'name="{name}" value="{value}"' in html
    query["state"] = "held"
    both = signed_in.get(reverse("place", args=[place.pk]), {**query, "older_than": "24"})
    assert _ids(both) == []
    assert '<option value="24" selected>1 day</option>' in both.content.decode()


def test_paging_keeps_the_filter(signed_in, place, letters, monkeypatch):
    monkeypatch.setattr(paging, "PAGE_SIZE", 1)
    response = signed_in.get(reverse("place", args=[place.pk]), {"exception": "KeyError"})
    assert _ids(response) == [letters["new_key"].pk]  # newest first
    (next_link,) = re.findall(r'href="(\?[^"]*after=\d+[^"]*)">Next page', response.content.decode())
    assert "exception=KeyError" in next_link
    following = signed_in.get(reverse("place", args=[place.pk]) + next_link.replace("&amp;", "&"))
    assert _ids(following) == [letters["old_key"].pk]


def test_a_large_match_says_more_than_and_small_ones_are_exact(signed_in, place, letters, monkeypatch):
    monkeypatch.setattr(letter_lists, "COUNT_CAP", 2)
    everything = signed_in.get(reverse("place", args=[place.pk])).content.decode()
    assert "<strong>More than 2</strong> letters match" in everything
    narrowed = signed_in.get(reverse("place", args=[place.pk]), {"exception": "TimeoutError"}).content.decode()
    assert "<strong>1</strong> letter matches" in narrowed


def test_a_group_link_arrives_with_select_all_ticked(signed_in, place, letters):
    query = {"fingerprint": letters["timeout"].fingerprint, "state": "held", "select_all": "1"}
    html = signed_in.get(reverse("place", args=[place.pk]), query).content.decode()
    assert re.search(r'<input type="checkbox" name="select_all" value="1" id="select-all" checked>', html)
    assert f'value="{letters["timeout"].fingerprint}"' in html  # the hidden copy of the filter goes along
