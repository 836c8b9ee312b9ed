"""A new body format is one room (console/decoders): a module that says how it recognises a body
and reads it (tests/kinds_for_tests/rot13_format.py, which no file under console/ names), once
registered, is read on the letter's page, found by the body search, masked for a viewer and
given by the API as ``decoded``, as the console's own formats are."""

from __future__ import annotations

import codecs

import pytest
from django.urls import reverse

from console.decoders import register, unregister
from console.services.redaction import do_set_redaction_rule
from console.services.search_rows import fill_search_rows
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db

SECRET = "card 4111-1111-1111-1111 for order forty-two"


@pytest.fixture
def rot13():
    register("rot13", "tests.kinds_for_tests.rot13_format.Rot13")
    yield
    unregister("rot13")


@pytest.fixture
def letter(rot13, memory_broker):
    made = store_letter(memory_place(memory_broker), codecs.encode(SECRET, "rot13").encode(),
                        properties={"content_type": "application/x-rot13"})
    fill_search_rows()
    return made


def test_the_page_shows_it_read(signed_in, letter):
    html = signed_in.get(reverse("letter", args=[letter.pk])).content.decode()
    assert "Stored as ROT13; shown read, as JSON." in html
    assert "order forty-two" in html


def test_the_body_search_finds_what_it_reads(signed_in, letter):
    found = signed_in.get("/api/letters/", {"q": "forty-two"}).json()["results"]
    assert [row["id"] for row in found] == [letter.pk]
    assert signed_in.get("/api/letters/", {"q": "sbegl-gjb"}).json()["results"] == []  # not the stored bytes


def test_the_api_gives_it_decoded_beside_the_stored_body(signed_in, letter):
    answer = signed_in.get(f"/api/letters/{letter.pk}/").json()
    assert answer["decoded"] == {"format": "rot13", "format_label": "ROT13", "value": {"plain": SECRET},
                                 "error": "", "unsafe": False}
    assert answer["body"]["text"] == codecs.encode(SECRET, "rot13")


@pytest.mark.role("viewer")
def test_a_viewer_reads_it_masked(signed_in, letter):
    do_set_redaction_rule(actor="tests", kind="regex", pattern=r"\d{4}-\d{4}-\d{4}-\d{4}")
    html = signed_in.get(reverse("letter", args=[letter.pk])).content.decode()
    assert "order forty-two" in html and "4111-1111" not in html
    decoded = signed_in.get(f"/api/letters/{letter.pk}/").json()["decoded"]
    assert "4111" not in str(decoded) and "order forty-two" in decoded["value"]["plain"]


def test_unregistered_it_is_shown_as_stored(signed_in, letter):
    unregister("rot13")
    html = signed_in.get(reverse("letter", args=[letter.pk])).content.decode()
    assert "shown read" not in html and codecs.encode(SECRET, "rot13") in html
