"""The header and body-text filters read LetterSearch, which triggers keep beside the letters:
it follows a capture (COPY), a purge that erases the body, and a change of state leaves it be."""

from __future__ import annotations

import pytest

from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import DeadLetter, LetterSearch
from console.services.selection import filter_letters
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


def _found(**params) -> list[int]:
    return list(filter_letters(params).order_by("id").values_list("id", flat=True))


@pytest.mark.role("admin")
def test_search_finds_what_custody_holds_and_forgets_an_erased_body(memory_broker, operator):
    place = memory_place(memory_broker)
    card = store_letter(place, b'{"note": "gift wrap", "card": "4111\\\\1111"}', headers={"tenant": "acme"})
    other = store_letter(place, b'{"note": "none"}', headers={"tenant": "globex"})
    assert LetterSearch.objects.filter(letter__in=[card, other]).count() == 2
    assert _found(q="gift wrap") == [card.pk]
    assert _found(q="4111\\\\1111") == [card.pk]  # backslashes, as PostgreSQL escapes them
    assert _found(header="tenant", header_value="globex") == [other.pk]

    DeadLetter.objects.filter(pk=other.pk).update(state="failed")  # a change of state: search unchanged
    assert _found(header="tenant", header_value="globex") == [other.pk]

    purge = request_job("purge", actor=operator, reason="card number in the body", ids=[card.pk])
    assert run_job(purge.pk) == "succeeded"
    assert _found(q="gift wrap") == [] and LetterSearch.objects.get(letter=card).text == ""


@pytest.mark.role("admin")
def test_a_large_body_is_found_beyond_the_text_kept_for_it(memory_broker, operator):
    place = memory_place(memory_broker)
    cut = LetterSearch.TEXT_BYTES
    head, tail = b"a" * (cut - 3), b"b" * 100_000
    large = store_letter(place, head + b"needle" + tail + b"second needle at the end")
    small = store_letter(place, b"a needle in a small body")
    plain = store_letter(place, b"x" * (cut + 10))

    search = LetterSearch.objects.get(letter=large)
    assert search.partial and len(search.text) == cut, "only the first 64 KiB is indexed"
    assert not LetterSearch.objects.get(letter=small).partial
    assert _found(q="needle") == [large.pk, small.pk], "across the cut, and beyond it"
    assert _found(q="second needle at the end") == [large.pk]
    assert _found(q="nowhere") == []

    # Erasing the body (a purge) makes its text whole again: empty.
    purge = request_job("purge", actor=operator, reason="too large", ids=[large.pk, plain.pk])
    assert run_job(purge.pk) == "succeeded"
    assert not LetterSearch.objects.filter(partial=True).exists()
    assert _found(q="needle") == [small.pk]
