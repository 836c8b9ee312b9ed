"""Finding 15 of issue 28: a hostile body made its own letter unviewable. A JSON body of 5,000
nested arrays (10 KB) gave a 500 on the letter's page (RecursionError in display.body_view).
Decoders fed by message content are bounded in depth and size (console.letters.bounded_json):
the page answers 200 and shows such a body as its text, for an operator and for a viewer whose
redaction rules mask JSON fields; a body nested as deep as a person reads is still a tree."""

from __future__ import annotations

import pytest
from django.utils.html import escape

from console.access.roles import VIEWER, set_role
from console.services.redaction import do_set_redaction_rule
from tests.web.factory import store_letter

pytestmark = pytest.mark.django_db

DEEP = b"[" * 5000 + b"]" * 5000


@pytest.fixture
def viewer(django_user_model):
    user = django_user_model.objects.create_user("vic", password="viewer-pass-123")
    set_role(user, VIEWER)
    return user


def test_the_page_of_a_letter_of_5000_nested_arrays_shows_its_text(client, operator, viewer, place):
    do_set_redaction_rule(actor="tests", kind="json_path", pattern="$..card")
    letter = store_letter(place, DEEP)
    for person in (operator, viewer):
        client.force_login(person)
        page = client.get(f"/letters/{letter.pk}/")
        assert page.status_code == 200, (person, page.content[:300])
        assert "[" * 5000 in page.content.decode()  # the body, as the text it is
    api = client.get(f"/api/letters/{letter.pk}/")
    assert api.status_code == 200 and api.json()["body"]["text"] == DEEP.decode()


def test_a_deep_body_inside_strings_or_objects_is_no_500_either(client, operator, place):
    client.force_login(operator)
    for body in (b'{"a":' * 3000 + b"1" + b"}" * 3000, b"[" * 990 + b"]" * 990, b'{"s": "' + b"[" * 5000 + b'"}'):
        letter = store_letter(place, body)
        assert client.get(f"/letters/{letter.pk}/").status_code == 200, body[:20]


def test_a_body_nested_as_deep_as_people_write_is_still_shown_as_json(client, operator, place):
    letter = store_letter(place, b'{"order": {"items": [{"sku": "A-1"}]}}')
    client.force_login(operator)
    html = client.get(f"/letters/{letter.pk}/").content.decode()
    assert escape('"sku": "A-1"') in html and escape('{\n  "order": {') in html
