"""A compressed body (gzip, deflate, zstd: the AMQP ``content_encoding``, a ``Content-Encoding``
header, Celery's ``compression`` header) is shown decoded on the letter's page, in the place's
previews, in a look at the place on its broker and in the edit box, with a note saying so (it
was a hex dump). A zip bomb is not expanded ("too large to decode") and data that does not
decode is shown as stored: both with a note, neither a 500."""

from __future__ import annotations

import gzip
import html
import zlib

import pytest
import zstandard
from django.urls import reverse

from console.brokers.memory.adapter import Message
from console.services.brokers import do_discover
from tests.web.factory import store_letter

pytestmark = pytest.mark.django_db

ORDER = b'{"order":1006,"sku":"gift-wrap-777","note":"caf\xc3\xa9"}'
SHOWN = '"sku": "gift-wrap-777"'

COMPRESSED = {  # how a sender says it, what it sends
    "gzip property": ({"content_encoding": "gzip"}, {}, gzip.compress(ORDER)),
    "deflate property": ({"content_encoding": "deflate"}, {}, zlib.compress(ORDER)),
    "zstd property": ({"content_encoding": "zstd"}, {}, zstandard.ZstdCompressor().compress(ORDER)),
    "Spring's gzip:UTF-8": ({"content_encoding": "gzip:UTF-8"}, {}, gzip.compress(ORDER)),
    "Content-Encoding header": ({}, {"Content-Encoding": "gzip"}, gzip.compress(ORDER)),
    "Celery's compression header": ({"content_encoding": "utf-8"}, {"compression": "application/x-gzip"},
                                    zlib.compress(ORDER)),
    "Celery's zstd": ({"content_encoding": "utf-8"}, {"compression": "application/zstd"},
                      zstandard.ZstdCompressor().compress(ORDER)),
}


def page_of(client, letter) -> str:
    response = client.get(reverse("letter", args=[letter.pk]))
    assert response.status_code == 200
    return html.unescape(response.content.decode())


@pytest.mark.parametrize("said", COMPRESSED)
def test_the_letters_page_shows_the_body_decoded(signed_in, place, said):
    properties, headers, body = COMPRESSED[said]
    letter = store_letter(place, body, properties=properties, headers=headers)
    page = page_of(signed_in, letter)
    assert page.count(SHOWN) == 2 and "café" in page  # the body, and the edit box
    assert 'id="body-compression"' in page and "shown decoded" in page
    assert 'id="edit-compression"' in page and "compressed again" in page
    assert "1f 8b" not in page  # no hex dump of the stored bytes


def test_the_places_previews_show_bodies_decoded(signed_in, place):
    for properties, headers, body in COMPRESSED.values():
        store_letter(place, body, properties=properties, headers=headers)
    page = html.unescape(signed_in.get(reverse("place", args=[place.pk])).content.decode())
    assert page.count('{"order":1006,"sku":"gift-wrap-777"') == len(COMPRESSED)
    assert "(binary," not in page


def test_a_look_at_the_place_on_the_broker_shows_bodies_decoded(signed_in, memory_broker, operator):
    fake, broker = memory_broker
    for properties, headers, body in COMPRESSED.values():
        fake.queue("orders.dlq").append(Message(body, headers, properties))
    (place,) = do_discover(broker, actor=operator)
    page = html.unescape(signed_in.get(reverse("place-peek", args=[broker.pk, place.pk])).content.decode())
    assert page.count('{"order":1006,"sku":"gift-wrap-777"') == len(COMPRESSED)


def test_a_body_that_is_not_compressed_is_shown_as_it_is(signed_in, place):
    letter = store_letter(place, ORDER, properties={"content_encoding": "utf-8"})
    page = page_of(signed_in, letter)
    assert SHOWN in page and 'id="body-compression"' not in page


def test_a_zip_bomb_is_not_expanded(signed_in, place):
    bomb = gzip.compress(b"\0" * (20 * 1024 * 1024))  # 20 KiB that would become 20 MiB
    letter = store_letter(place, bomb, properties={"content_encoding": "gzip"})
    page = page_of(signed_in, letter)
    assert "too large to decode" in page and "shown as stored" in page
    assert "00000000  1f 8b" in page  # the stored bytes, as a hex dump
    assert 'id="edit-compression"' not in page
    places_page = signed_in.get(reverse("place", args=[place.pk]))
    assert places_page.status_code == 200


@pytest.mark.parametrize("encoding", ["gzip", "deflate", "zstd"])
def test_a_body_that_does_not_decode_is_shown_as_stored_with_a_note(signed_in, place, encoding):
    letter = store_letter(place, b"plainly not compressed", properties={"content_encoding": encoding})
    page = page_of(signed_in, letter)
    assert "does not decode: shown as stored" in page and "plainly not compressed" in page
    assert signed_in.get(reverse("place", args=[place.pk])).status_code == 200


def test_a_cut_off_body_does_not_decode(signed_in, place):
    letter = store_letter(place, gzip.compress(ORDER)[:-6], properties={"content_encoding": "gzip"})
    assert "does not decode: shown as stored" in page_of(signed_in, letter)
