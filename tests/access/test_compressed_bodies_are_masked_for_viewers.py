"""A card number inside a compressed body (gzip, deflate, zstd) is masked for a viewer as in a
body sent as it is: the body is decoded first, then masked, on the letter's page, in the
place's previews and in what the body filter finds; an operator sees it decoded, unmasked."""

from __future__ import annotations

import gzip
import html
import json
import zlib

import pytest
import zstandard

from console.services.redaction import do_set_redaction_rule
from console.services.selection import visible_matches
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db

CARD = "4111 1111 1111 1111"
BODY = json.dumps({"customer": {"email": "eve@example.com"}, "note": f"call about {CARD}",
                   "sku": "gift-wrap-777"}).encode()
PACK = {"gzip": gzip.compress, "deflate": zlib.compress, "zstd": zstandard.ZstdCompressor().compress}


@pytest.fixture
def letter(memory_broker, request):
    for kind, pattern in (("json_path", "$..email"), ("regex", r"\b(?:\d[ -]*?){13,19}\b")):
        do_set_redaction_rule(actor="tests", kind=kind, pattern=pattern)
    encoding = request.param
    return store_letter(memory_place(memory_broker), PACK[encoding](BODY), properties={"content_encoding": encoding})


def _page(client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200
    return html.unescape(response.content.decode())


@pytest.mark.parametrize("letter", list(PACK), indirect=True)
def test_a_viewer_sees_the_decoded_body_masked(letter, people, signed_in_as):
    page = _page(signed_in_as(people["viewer"]), f"/letters/{letter.pk}/")
    assert CARD not in page and "eve@example.com" not in page and "4111" not in page
    assert '"sku": "gift-wrap-777"' in page and '"email": "***"' in page and "call about ***" in page
    assert 'id="body-hidden"' not in page and 'id="body-compression"' in page

    previews = _page(signed_in_as(people["viewer"]), f"/places/{letter.place_id}/")
    assert "gift-wrap-777" in previews and "4111" not in previews and "eve@example.com" not in previews

    page = _page(signed_in_as(people["operator"]), f"/letters/{letter.pk}/")
    assert CARD in page and "eve@example.com" in page


@pytest.mark.parametrize("letter", list(PACK), indirect=True)
def test_a_viewer_finds_the_letter_by_what_they_read_and_not_by_what_is_masked(letter, people):
    viewer, operator = people["viewer"], people["operator"]
    assert list(visible_matches(viewer, {"q": "gift-wrap-777"}).letters) == [letter]
    assert list(visible_matches(viewer, {"q": "1111 1111"}).letters) == []
    assert list(visible_matches(viewer, {"q": "eve@example"}).letters) == []
    assert list(visible_matches(operator, {"q": "1111 1111"}).letters) == [letter]
