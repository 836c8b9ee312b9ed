"""The Letters page: every place the reader may see, in the navigation, with the place page's
filter form and its bulk actions (through the preview across places and the one door)."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from console.models import Job
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


@pytest.fixture
def letters(memory_broker, place):
    billing = memory_place(memory_broker, origin="billing")
    return [store_letter(place, b'{"order": 1}', exception_type="TimeoutError"),
            store_letter(billing, b'{"invoice": 2}', origin="billing", exception_type="TimeoutError"),
            store_letter(billing, b'{"invoice": 3}', origin="billing", exception_type="KeyError")]


def _listed(html: str) -> list[int]:
    return [int(pk) for pk in re.findall(r'name="ids" value="(\d+)"', html)]


def test_the_letters_page_is_in_the_navigation_and_lists_every_place_with_filters(signed_in, letters):
    inventory = signed_in.get(reverse("inventory")).content.decode()
    assert f'<a href="{reverse("letters")}">Letters</a>' in inventory
    html = signed_in.get(reverse("letters")).content.decode()
    assert "No such letters." not in html and 'aria-label="Filter letters"' in html
    assert _listed(html) == [letter.pk for letter in reversed(letters)] and "<strong>3</strong> letters match" in html
    assert "orders.dlq" in html and "billing.dlq" in html  # each letter's place
    narrowed = signed_in.get(reverse("letters"), {"exception": "TimeoutError"}).content.decode()
    assert _listed(narrowed) == [letters[1].pk, letters[0].pk]


def test_ids_and_analytics_keys_still_list_their_letters(signed_in, letters):
    by_ids = signed_in.get(reverse("letters"), {"ids": f"{letters[2].pk}"}).content.decode()
    assert f'href="/letters/{letters[2].pk}/"' in by_ids and f'href="/letters/{letters[0].pk}/"' not in by_ids
    assert 'id="letters-form"' not in by_ids  # a list to read, not to act on
    weekday = letters[0].captured_at.isoweekday()
    analytics = signed_in.get(reverse("letters"), {"weekday": weekday}).content.decode()
    assert _listed(analytics) == [letter.pk for letter in reversed(letters)]
    assert f'<input type="hidden" name="filter-weekday" value="{weekday}">' in analytics


def test_all_matching_across_places_are_marked_failed_through_the_door(signed_in, letters):
    preview = signed_in.post(reverse("letters-preview"), {"action": "mark_failed", "select_all": "1",
                                                          "filter-exception": "TimeoutError"})
    said = preview.content.decode()
    assert '<strong id="preview-count">2</strong>' in said and "the places you may see" in said
    token = re.search(r'name="token" value="([^"]+)"', said).group(1)
    signed_in.post(reverse("action-confirm"), {"token": token, "reason": "known timeouts"})
    job = Job.objects.get()
    assert (job.kind, job.total, job.selection["filter"]) == ("mark_failed", 2, {"exception": "TimeoutError"})
    assert set(job.per_place) == {str(letters[0].place_id), str(letters[1].place_id)}


def test_ticked_letters_across_places_are_previewed_alone(signed_in, letters):
    preview = signed_in.post(reverse("letters-preview"),
                             {"action": "replay", "ids": [letters[0].pk, letters[2].pk]}).content.decode()
    assert '<strong id="preview-count">2</strong>' in preview and "ticked by hand" in preview


def test_several_states_as_the_analytics_link_them_filter_the_page(signed_in, letters):
    """Issue 46: the failure analytics link their resolved letters as ``state=replayed,failed``;
    the page takes the list as the API does, shows it as the chosen state, and says no error."""
    from console.models import DeadLetter

    DeadLetter.objects.filter(pk=letters[0].pk).update(state="replayed")
    DeadLetter.objects.filter(pk=letters[2].pk).update(state="failed")
    html = signed_in.get(reverse("letters"), {"state": "replayed,failed"}).content.decode()
    assert "Select a valid choice" not in html and 'class="errorlist"' not in html
    assert set(re.findall(r'href="/letters/(\d+)/"', html)) == {str(letters[0].pk), str(letters[2].pk)}
    assert '<option value="replayed,failed" selected>replayed or failed</option>' in html
    refused = signed_in.get(reverse("letters"), {"state": "replayed,lost"}).content.decode()
    assert "must be states among" in refused
