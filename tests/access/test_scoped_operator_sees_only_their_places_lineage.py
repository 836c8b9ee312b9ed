"""A letter of A whose replay died again in B (after a move): the letter's page and API do not
list the return in B to a user limited to A, nor its exception (issue 16, finding 1)."""

from __future__ import annotations

import pytest

from console.models import DeadLetter
from tests.access.conftest import shows_nothing_of_b

pytestmark = pytest.mark.django_db


def test_returns_in_another_place_are_not_listed(places_a_and_b, people, signed_in_as):
    a_letter, b_letter = places_a_and_b.a_letter, places_a_and_b.b_letter
    DeadLetter.objects.filter(pk=b_letter.pk).update(parent=a_letter)
    admin = signed_in_as(people["admin"])
    assert admin.get(f"/api/letters/{a_letter.pk}/").json()["lineage"]["returns"] == [b_letter.pk]
    assert "LedgerMismatchError" in admin.get(f"/letters/{a_letter.pk}/").content.decode()
    otto = signed_in_as(places_a_and_b.otto)
    assert otto.get(f"/api/letters/{a_letter.pk}/").json()["lineage"]["returns"] == []
    page = otto.get(f"/letters/{a_letter.pk}/").content.decode()
    assert f'href="/letters/{b_letter.pk}/"' not in page
    shows_nothing_of_b(page)
