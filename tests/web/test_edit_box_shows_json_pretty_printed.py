"""The edit-and-replay box shows a JSON body pretty-printed (it showed a compact body on one
line); what is sent is the letter's own bytes unless edited, and an edit made in the box's
layout is sent compact, as the letter came."""

from __future__ import annotations

import html
import json

import pytest
from django.urls import reverse

from console.models import DeadLetter
from tests.web.factory import store_letter

pytestmark = pytest.mark.django_db

BODY = b'{"order":7,"items":[{"sku":"A-1","qty":2}],"note":"caf\\u00e9"}'
SHOWN = '{\n  "order": 7,\n  "items": [\n    {\n      "sku": "A-1",\n      "qty": 2\n    }\n  ],\n  "note": "café"\n}'


@pytest.fixture
def letter(place):
    return store_letter(place, BODY, headers={"x-tenant": "acme"})


def _replay(client, letter, body: str) -> DeadLetter:
    """Send the box as a browser does (CRLF line ends) and return the copy it replays."""
    client.post(reverse("letter-edit", args=[letter.pk]), {
        "body": body.replace("\n", "\r\n"), "body_encoding": "text", "headers": json.dumps(letter.headers),
        "reason": "fix", "confirmed": "1"})
    return DeadLetter.objects.get(parent=letter)


def test_the_box_shows_the_json_body_pretty_printed(signed_in, letter):
    page = signed_in.get(reverse("letter", args=[letter.pk])).content.decode()
    assert html.escape(SHOWN, quote=False).replace('"', "&quot;") in page


def test_an_unedited_box_sends_the_letters_own_bytes(signed_in, letter):
    assert _replay(signed_in, letter, SHOWN).body_bytes == BODY


def test_an_edit_in_the_boxs_layout_is_sent_compact(signed_in, letter):
    copy = _replay(signed_in, letter, SHOWN.replace('"qty": 2', '"qty": 3'))
    assert copy.body_bytes == '{"order":7,"items":[{"sku":"A-1","qty":3}],"note":"café"}'.encode()


def test_a_body_typed_in_a_layout_of_ones_own_is_sent_as_typed(signed_in, letter):
    assert _replay(signed_in, letter, '{"order": 8}\n').body_bytes == b'{"order": 8}\n'
