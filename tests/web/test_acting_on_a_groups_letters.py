"""A failure group's page lists the group's letters (filters, keyset pages) and acts on all
matching through the preview across places, the confirm step and the one door."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from console.models import Job
from console.web import paging
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


@pytest.fixture
def group(memory_broker, place):
    """Three letters of one failure group in two places (the third moved there, still from
    ``orders``), and one letter of another group."""
    other_place = memory_place(memory_broker, origin="billing")
    timeouts = [store_letter(place, b'{"order": 1}', exception_type="TimeoutError", exception_message="slow"),
                store_letter(place, b'{"order": 2}', exception_type="TimeoutError", exception_message="slow"),
                store_letter(other_place, b'{"order": 3}', exception_type="TimeoutError",
                             exception_message="slow")]
    stranger = store_letter(place, b'{"order": 4}', exception_type="KeyError", exception_message="sku")
    return timeouts, stranger


def _listed(html: str) -> list[int]:
    return [int(pk) for pk in re.findall(r'name="ids" value="(\d+)"', html)]


def test_the_groups_page_lists_its_letters_and_filters_them(signed_in, group):
    timeouts, stranger = group
    fingerprint = timeouts[0].fingerprint
    assert {letter.fingerprint for letter in timeouts} == {fingerprint} != {stranger.fingerprint}
    html = signed_in.get(reverse("group", args=[fingerprint])).content.decode()
    assert _listed(html) == [letter.pk for letter in reversed(timeouts)]  # newest first
    assert "<strong>3</strong> letters match" in html and 'aria-label="Filter letters"' in html
    narrowed = signed_in.get(reverse("group", args=[fingerprint]), {"q": '"order": 2'}).content.decode()
    assert _listed(narrowed) == [timeouts[1].pk]


def test_the_groups_letters_come_in_keyset_pages(signed_in, group, monkeypatch):
    timeouts, _ = group
    monkeypatch.setattr(paging, "PAGE_SIZE", 2)
    first = signed_in.get(reverse("group", args=[timeouts[0].fingerprint])).content.decode()
    assert _listed(first) == [timeouts[2].pk, timeouts[1].pk]  # newest first
    (next_link,) = re.findall(r'href="(\?[^"]*after=\d+[^"]*)">Next page', first)
    following = signed_in.get(reverse("group", args=[timeouts[0].fingerprint]) + next_link.replace("&amp;", "&"))
    assert _listed(following.content.decode()) == [timeouts[0].pk]


def test_all_matching_letters_of_the_group_are_replayed_through_the_door(signed_in, group):
    timeouts, stranger = group
    fingerprint = timeouts[0].fingerprint
    html = signed_in.get(reverse("group", args=[fingerprint])).content.decode()
    assert f'action="{reverse("letters-preview")}"' in html and "Act on the ticked letters" in html
    assert f'name="filter-fingerprint" value="{fingerprint}"' in html  # the hidden copy of the filter

    preview = signed_in.post(reverse("letters-preview"), {"action": "replay", "select_all": "1",
                                                          "filter-fingerprint": fingerprint})
    said = preview.content.decode()
    assert preview.status_code == 200 and not Job.objects.exists()
    assert '<strong id="preview-count">3</strong>' in said and f"<code>fingerprint={fingerprint}</code>" in said
    token = re.search(r'name="token" value="([^"]+)"', said).group(1)
    done = signed_in.post(reverse("action-confirm"), {"token": token, "reason": "timeouts fixed"})
    job = Job.objects.get()
    assert done["Location"] == reverse("job", args=[job.pk])
    assert (job.kind, job.total, job.selection["filter"]) == ("replay", 3, {"fingerprint": fingerprint})
    assert set(job.per_place) == {str(timeouts[0].place_id), str(timeouts[2].place_id)}
