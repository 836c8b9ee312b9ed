"""Issue 46: groups are easy to reach. A letter's page links to its failure group, whose page
answers; a fingerprint's first characters as the pages show them ("fe398c18…") find the
group's letters on the letters page and through the API, as the whole fingerprint does."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from tests.web.factory import store_letter

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_groups(place):
    timeouts = [store_letter(place, b"{}", exception_type="TimeoutError", exception_message="read timed out")
                for _ in range(2)]
    other = store_letter(place, b"{}", exception_type="KeyError", exception_message="'sku'")
    assert timeouts[0].fingerprint != other.fingerprint
    return timeouts, other


def test_a_letter_links_to_its_group(signed_in, two_groups):
    (letter, _), _ = two_groups
    html = signed_in.get(reverse("letter", args=[letter.pk])).content.decode()
    link = re.search(r'<a href="([^"]+)" id="letter-group">', html)
    assert link is not None and link.group(1) == reverse("group", args=[letter.fingerprint])
    assert signed_in.get(link.group(1)).status_code == 200


@pytest.mark.parametrize("shown", ["{eight}…", "{eight}...", "{eight}", " {EIGHT} ", "{whole}"])
def test_the_shown_prefix_finds_the_groups_letters(signed_in, two_groups, shown):
    timeouts, other = two_groups
    fingerprint = timeouts[0].fingerprint
    given = shown.format(eight=fingerprint[:8], EIGHT=fingerprint[:8].upper(), whole=fingerprint)
    html = signed_in.get(reverse("letters"), {"fingerprint": given}).content.decode()
    assert set(re.findall(r'name="ids" value="(\d+)"', html)) == {str(letter.pk) for letter in timeouts}
    api = signed_in.get("/api/letters/", {"fingerprint": given}).json()
    assert {row["id"] for row in api["results"]} == {letter.pk for letter in timeouts}


def test_a_groups_page_says_its_count_plainly(signed_in, two_groups):
    (letter, _), _ = two_groups
    html = signed_in.get(reverse("group", args=[letter.fingerprint])).content.decode()
    assert re.search(r'<p class="note" id="group-count">2 letters, from orders;', html)
    assert "you may see" not in html
