"""A new export format is one room (console/exports): a module that writes records
(tests/kinds_for_tests/tsv_export.py), once registered, is offered beside a list's actions and
answered by the API, masked and scoped as the console's own formats are (it writes the records
letter_export made for the reader)."""

from __future__ import annotations

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from console.exports import register, unregister
from tests.exports.helpers import downloaded
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


@pytest.fixture
def tsv():
    register("tsv", "tests.kinds_for_tests.tsv_export.Tsv")
    yield
    unregister("tsv")


def test_a_registered_format_is_offered_and_exported(tsv, memory_broker, operator, signed_in):
    place = memory_place(memory_broker)
    letters = [store_letter(place, b"{}", origin="orders", reason=reason) for reason in ("rejected", "expired")]
    page = signed_in.get(reverse("place", args=[place.pk])).content.decode()
    assert "TSV (ids)</a>" in page and "format=tsv" in page
    api = APIClient()
    api.force_authenticate(operator)
    answer = api.get("/api/letters/export/", {"format": "tsv", "place": place.pk})
    assert answer["Content-Disposition"].endswith('.tsv"')
    assert downloaded(answer).decode().splitlines() == [f"{letter.pk}\torders\t{letter.reason}"
                                                        for letter in letters]
