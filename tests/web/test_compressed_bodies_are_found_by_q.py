"""The body filter ``q`` finds a compressed letter (gzip, deflate, zstd) by its decoded text, as
the page shows it, never by its stored compressed bytes: whether the letter was stored at once
or by a capture whose search rows are filled afterwards, on the place's page, the letters
list, ``/api/letters/`` and a frozen selection alike."""

from __future__ import annotations

import gzip
import io
import zlib

import pytest
import zstandard
from django.urls import reverse

from console.models import DeadLetter, LetterSearch
from console.services.search_rows import fill_search_rows, written_later
from console.services.selection import filter_letters, freeze, resolve
from tests.web.factory import store_letter

pytestmark = pytest.mark.django_db

ORDER = b'{"order": 1006, "sku": "gift-wrap-777", "city": "Z\xc3\xbcrich"}'
ENCODED = {"gzip": gzip.compress(ORDER), "deflate": zlib.compress(ORDER),
           "zstd": zstandard.ZstdCompressor().compress(ORDER)}


def found(place, needle: str) -> list[str]:
    return sorted(filter_letters({"place": place.pk, "q": needle}).values_list("message_id", flat=True))


@pytest.fixture
def letters(place):
    stored = {encoding: store_letter(place, body, properties={"content_encoding": encoding})
              for encoding, body in ENCODED.items()}
    stored["plain"] = store_letter(place, b'{"sku": "plain-1"}')
    for encoding, letter in stored.items():
        DeadLetter.objects.filter(pk=letter.pk).update(message_id=encoding)
    return stored


def test_q_finds_compressed_letters_by_their_decoded_text(place, letters):
    assert found(place, "gift-wrap-777") == ["deflate", "gzip", "zstd"]
    assert found(place, "Zürich") == ["deflate", "gzip", "zstd"]
    assert found(place, "plain-1") == ["plain"]
    assert found(place, "not in any letter") == []
    text = LetterSearch.objects.get(letter=letters["gzip"]).text
    assert "gift-wrap-777" in text  # the search row holds the decoded text


def test_q_does_not_find_a_compressed_letter_by_its_stored_bytes(place):
    stored = io.BytesIO()
    with gzip.GzipFile(filename="name-in-the-gzip-header", mode="wb", fileobj=stored, mtime=0) as packer:
        packer.write(ORDER)  # the gzip header holds the name in plain bytes; the body does not
    letter = store_letter(place, stored.getvalue(), properties={"content_encoding": "gzip"})
    assert b"name-in-the-gzip-header" in letter.body_bytes
    assert not filter_letters({"place": place.pk, "q": "name-in-the-gzip-header"}).exists()
    assert filter_letters({"place": place.pk, "q": "gift-wrap-777"}).get() == letter


def test_q_on_the_pages_and_the_api(signed_in, place, letters):
    page = signed_in.get(reverse("place", args=[place.pk]), {"q": "gift-wrap-777"}).content.decode()
    assert page.count(f"/letters/{letters['gzip'].pk}/") >= 1 and f"/letters/{letters['plain'].pk}/" not in page
    listed = signed_in.get(reverse("letters"), {"q": "gift-wrap-777"}).content.decode()
    assert all(f"/letters/{letters[e].pk}/" in listed for e in ENCODED)
    answer = signed_in.get("/api/letters/", {"q": "gift-wrap-777"}).json()
    assert sorted(row["id"] for row in answer["results"]) == sorted(letters[e].pk for e in ENCODED)


def test_a_frozen_selection_acts_on_the_letters_q_finds(place, letters):
    selection = freeze(filter={"place": place.pk, "q": "gift-wrap-777"})
    assert sorted(resolve(selection).values_list("message_id", flat=True)) == ["deflate", "gzip", "zstd"]


def test_letters_a_capture_stores_are_found_before_and_after_their_rows_are_filled(place):
    with written_later():
        for encoding, body in ENCODED.items():
            DeadLetter.objects.filter(pk=store_letter(place, body, properties={"content_encoding": encoding}).pk
                                      ).update(message_id=encoding)
    assert LetterSearch.objects.filter(pending=True).count() == 3
    assert found(place, "gift-wrap-777") == ["deflate", "gzip", "zstd"]  # placeholders: bodies decoded
    assert fill_search_rows() == 3
    assert not LetterSearch.objects.filter(pending=True).exists()
    assert all("gift-wrap-777" in row.text for row in LetterSearch.objects.all())
    assert found(place, "gift-wrap-777") == ["deflate", "gzip", "zstd"]
    assert found(place, "Zürich") == ["deflate", "gzip", "zstd"]


def test_a_large_decoded_body_is_found_past_the_text_the_search_row_keeps(place):
    body = b"x" * (LetterSearch.TEXT_BYTES + 10) + b" needle-at-the-end"
    letter = store_letter(place, gzip.compress(body), properties={"content_encoding": "gzip"})
    assert LetterSearch.objects.get(letter=letter).partial
    assert filter_letters({"place": place.pk, "q": "needle-at-the-end"}).get() == letter
