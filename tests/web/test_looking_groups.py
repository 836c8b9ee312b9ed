"""Failure groups: counts match an independent count; links lead to the group's letters."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from django.urls import reverse

from console.models import DeadLetter
from console.services.groups import failure_groups
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


@pytest.fixture
def letters(place, memory_broker):
    other = memory_place(memory_broker, origin="payments")
    made = []
    for _ in range(4):
        made.append(store_letter(place, exception_type="KeyError", exception_message="'customer_7'"))
    for n in range(3):  # the numbers differ; the normalised message, so the group, does not
        made.append(store_letter(place, exception_type="TimeoutError",
                                 exception_message=f"read timed out after {n} ms"))
    made.append(store_letter(place, reason="expired"))
    made.append(store_letter(other, origin="payments", exception_type="KeyError", exception_message="'customer_7'"))
    return made


def test_group_counts_match_an_independent_count(letters, place):
    expected = Counter(DeadLetter.objects.filter(place=place).values_list("fingerprint", flat=True))
    groups = failure_groups({"place": place.pk})
    assert {g.fingerprint: g.count for g in groups} == expected
    assert [g.count for g in groups] == sorted(expected.values(), reverse=True)
    biggest = groups[0]
    assert (biggest.exception_type, biggest.exception_message, biggest.origins) == (
        "KeyError", "'customer_7'", ["orders"])


def test_the_view_across_places_lists_each_place_of_a_group(signed_in, letters, place):
    html = signed_in.get(reverse("groups")).content.decode()
    counts = [int(n) for n in re.findall(r'<td class="num"><strong><a href="[^"]+" title="these letters">(\d+)</a>'
                                         r'</strong></td>', html)]
    assert sorted(counts, reverse=True) == counts and sum(counts) == DeadLetter.objects.count()
    assert "Show these letters in mem / orders.dlq" in html and "Show these letters in mem / payments.dlq" in html


def test_a_group_links_to_its_letters_and_to_acting_on_all_of_them(signed_in, letters, place):
    group = failure_groups({"place": place.pk})[0]
    html = signed_in.get(reverse("place-groups", args=[place.pk])).content.decode()
    show = f'/places/{place.pk}/?fingerprint={group.fingerprint}&amp;state=held"'
    act = f'/places/{place.pk}/?fingerprint={group.fingerprint}&amp;state=held&amp;select_all=1#letters-form"'
    assert show in html and act in html
    assert "Letters per day in the 5 largest groups, orders.dlq" in html


def test_the_state_choice_narrows_the_groups(signed_in, letters, place):
    DeadLetter.objects.filter(exception_type="TimeoutError").update(state="replayed")
    held = signed_in.get(reverse("place-groups", args=[place.pk])).content.decode()
    anystate = signed_in.get(reverse("place-groups", args=[place.pk]), {"state": "any"}).content.decode()
    assert "TimeoutError" not in held and "TimeoutError" in anystate


def test_a_group_across_places_adds_them_up(letters, place, memory_broker):
    # The same failure from the same origin, dead-lettered into a second place too.
    other = memory_place(memory_broker, origin="payments")
    moved = store_letter(other, origin="orders", exception_type="KeyError", exception_message="'customer_7'")
    members = [letter for letter in letters if (letter.origin_queue, letter.exception_type) == ("orders", "KeyError")]
    members.append(moved)
    group = next(g for g in failure_groups({}) if g.fingerprint == moved.fingerprint)
    assert group.count == len(members) == 5
    assert (group.origins, group.more_origins) == (["orders"], 0)
    assert group.places == sorted([place.pk, other.pk])
    assert group.sample_id == min(letter.pk for letter in members)
    captured = [letter.captured_at for letter in members]
    assert (group.first_seen, group.last_seen) == (min(captured), max(captured))
    in_other = {g.fingerprint: (g.count, g.places) for g in failure_groups({"place": other.pk})}
    assert in_other[moved.fingerprint] == (1, [other.pk])
