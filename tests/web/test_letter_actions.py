"""The place page carries its filter into the bulk-action form (the flow itself: test_acting_preview)."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.web.factory import store_letter

pytestmark = pytest.mark.django_db


@pytest.fixture
def letters(place):
    return [store_letter(place, f"order {i}".encode(), origin="orders" if i < 3 else "payments") for i in range(5)]


def test_the_page_carries_its_filter_into_the_action_form(signed_in, place, letters):
    html = signed_in.get(reverse("place", args=[place.pk]), {"origin": "payments", "q": "order"}).content.decode()
    assert 'name="filter-origin" value="payments"' in html and 'name="filter-q" value="order"' in html
    assert "Select all 2 matching" in html
