"""The pages that act across places (the Letters page, a failure group's page) show and act on
only the letters the reader may see; a viewer is offered no action on them, nor on a letter."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from console.access.roles import VIEWER
from console.models import Job
from tests.access.conftest import shows_nothing_of_b

pytestmark = pytest.mark.django_db


def test_a_user_limited_to_a_lists_and_acts_on_a_alone(signed_in_as, places_a_and_b):
    client = signed_in_as(places_a_and_b.otto)
    html = client.get(reverse("letters")).content.decode()
    shows_nothing_of_b(html)
    assert re.findall(r'name="ids" value="(\d+)"', html) == [str(places_a_and_b.a_letter.pk)]

    preview = client.post(reverse("letters-preview"), {"action": "replay", "select_all": "1"}).content.decode()
    shows_nothing_of_b(preview)
    token = re.search(r'name="token" value="([^"]+)"', preview).group(1)
    client.post(reverse("action-confirm"), {"token": token, "reason": "orders are back"})
    job = Job.objects.get()
    assert job.selection["ids"] == [places_a_and_b.a_letter.pk] and set(job.per_place) == {str(places_a_and_b.a.pk)}


def test_a_user_limited_to_a_cannot_tick_bs_letter(signed_in_as, places_a_and_b):
    client = signed_in_as(places_a_and_b.otto)
    answer = client.post(reverse("letters-preview"), {"action": "replay", "ids": [places_a_and_b.b_letter.pk]})
    assert answer.status_code == 302 and not Job.objects.exists()


def test_a_user_limited_to_a_finds_no_group_of_b(signed_in_as, places_a_and_b):
    client = signed_in_as(places_a_and_b.otto)
    assert client.get(reverse("group", args=[places_a_and_b.b_letter.fingerprint])).status_code == 404
    mine = client.get(reverse("group", args=[places_a_and_b.a_letter.fingerprint])).content.decode()
    shows_nothing_of_b(mine)
    assert f'name="ids" value="{places_a_and_b.a_letter.pk}"' in mine


def test_a_viewer_is_offered_no_action_across_places(signed_in_as, people, places_a_and_b):
    client = signed_in_as(people[VIEWER])
    for url in (reverse("letters"), reverse("group", args=[places_a_and_b.a_letter.fingerprint]),
                reverse("letter", args=[places_a_and_b.a_letter.pk])):
        html = client.get(url).content.decode()
        assert "Preview…" not in html and 'name="action"' not in html and 'id="letter-actions"' not in html, url
    refused = client.post(reverse("letters-preview"), {"action": "replay", "select_all": "1"})
    assert refused.status_code == 403 and not Job.objects.exists()
