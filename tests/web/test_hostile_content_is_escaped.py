"""Bodies and headers are hostile: every page shows them as text, never as markup."""

from __future__ import annotations

import pytest
from django.urls import reverse

from tests.web.factory import XSS_IMG, XSS_SCRIPT, store_letter

pytestmark = pytest.mark.django_db

HOSTILE = XSS_SCRIPT + XSS_IMG


@pytest.fixture
def hostile(place):
    return store_letter(
        place, HOSTILE.encode(), headers={HOSTILE: HOSTILE, "nested": {"x": XSS_SCRIPT}},
        properties={"content_type": XSS_IMG}, origin=XSS_SCRIPT, exception_type=XSS_IMG,
        exception_message=XSS_SCRIPT,
    )


def _assert_escaped(html: str) -> None:
    assert "<script>alert" not in html
    assert "<img src=x" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html


def test_the_letter_page_escapes_body_headers_properties_and_envelope(signed_in, hostile):
    html = signed_in.get(reverse("letter", args=[hostile.pk])).content.decode()
    _assert_escaped(html)
    assert html.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 5  # body, header name+value, origin, exception


def test_the_letter_list_escapes_the_preview_origin_and_exception(signed_in, place, hostile):
    html = signed_in.get(reverse("place", args=[place.pk])).content.decode()
    _assert_escaped(html)


def test_a_hostile_json_body_is_escaped_when_pretty_printed(signed_in, place):
    letter = store_letter(place, f'{{"html": "{XSS_IMG}"}}'.encode())
    html = signed_in.get(reverse("letter", args=[letter.pk])).content.decode()
    assert "body-json" in html and "&lt;img src=x onerror=alert(1)&gt;" in html and "<img src=x" not in html


def test_a_filter_value_echoed_back_is_escaped(signed_in, place, hostile):
    html = signed_in.get(reverse("place", args=[place.pk]), {"q": XSS_SCRIPT}).content.decode()
    assert "<script>alert" not in html
    assert 'value="&lt;script&gt;alert(1)&lt;/script&gt;"' in html
