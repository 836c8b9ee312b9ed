"""A viewer's body, header and exception filters cannot find a letter by what a redaction rule
masks (issue 16, finding 2): the raw filter only proposes candidates, each is confirmed against
the letter as the viewer sees it. The place page's count and /api/letters/ agree, page by page,
even past the number of candidates one answer confirms; an operator still finds everything."""

from __future__ import annotations

import json
import re

import pytest

from console.services import selection
from console.services.redaction import do_set_redaction_rule
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db

CARD = "4111111111111111"


@pytest.fixture
def letters(memory_broker):
    do_set_redaction_rule(actor="tests", kind="regex", pattern=r"4111\d{12}")
    place = memory_place(memory_broker)
    return place, {
        "json": store_letter(place, json.dumps({"card": CARD, "order": 7}).encode()),
        "escaped": store_letter(place, b'{"card": "\\u0034\\u0031\\u0031\\u0031111111111111", "order": 8}'),
        "text": store_letter(place, f"order 9 paid with {CARD}".encode()),
        "header": store_letter(place, b"order 10", headers={"x-card": CARD}),
        "plain": store_letter(place, b"order 11 unpaid"),
    }


def _api_ids(client, **params) -> list[int]:
    """Every letter id the API lists, walking its ``next`` links."""
    found, response = [], client.get("/api/letters/", params)
    while True:
        assert response.status_code == 200, response.content
        data = response.json()
        found += [row["id"] for row in data["results"]]
        if not data["next"]:
            return found
        response = client.get(data["next"])


def _page(client, place, **params) -> tuple[str, list[int]]:
    """The place page's match count text and the letters it lists, walking its pages."""
    page = client.get(f"/places/{place.pk}/", params).content.decode()
    count = re.search(r'id="matching-count">(.*?)</span>', page, re.S)[1]
    found = []
    while True:
        found += [int(i) for i in re.findall(r'href="/letters/(\d+)/"', page)]
        more = re.search(r'href="\?[^"]*after=(\d+)', page)
        if not more:
            return " ".join(re.sub(r"<[^>]+>", " ", count).split()), sorted(set(found))
        page = client.get(f"/places/{place.pk}/", {**params, "after": more[1]}).content.decode()


@pytest.mark.parametrize("needle", [CARD, "4111", "41111111", "1111111111"])
def test_a_viewer_searching_a_masked_card_number_finds_no_letter(letters, needle, people, signed_in_as):
    place, _ = letters
    viewer = signed_in_as(people["viewer"])
    assert _api_ids(viewer, place=place.pk, q=needle) == []
    assert _page(viewer, place, q=needle) == ("0 letters match", [])


def test_an_operator_still_finds_the_letters_holding_it(letters, people, signed_in_as):
    place, made = letters
    operator = signed_in_as(people["operator"])
    expected = [made["json"].pk, made["text"].pk]  # the escaped body holds other bytes
    assert _api_ids(operator, place=place.pk, q=CARD) == expected
    assert _page(operator, place, q=CARD)[0] == "2 letters match"


def test_a_viewer_cannot_find_a_letter_by_a_masked_header_value(letters, people, signed_in_as):
    place, made = letters
    params = {"header": "x-card", "header_value": CARD}
    assert _api_ids(signed_in_as(people["viewer"]), place=place.pk, **params) == []
    assert _page(signed_in_as(people["viewer"]), place, **params) == ("0 letters match", [])
    assert _api_ids(signed_in_as(people["operator"]), place=place.pk, **params) == [made["header"].pk]


def test_a_viewer_still_finds_what_they_can_read(letters, people, signed_in_as):
    place, made = letters
    viewer = signed_in_as(people["viewer"])
    expected = [made["json"].pk, made["escaped"].pk, made["text"].pk, made["header"].pk, made["plain"].pk]
    assert _api_ids(viewer, place=place.pk, q="order ") == [made["text"].pk, made["header"].pk, made["plain"].pk]
    assert _api_ids(viewer, place=place.pk, q="order") == expected
    assert _page(viewer, place, q="order") == ("5 letters match", expected)
    assert _api_ids(viewer, place=place.pk, header="x-card") == [made["header"].pk]  # names are not masked


def test_a_needle_holding_the_mask_is_refused(letters, people, signed_in_as):
    place, _ = letters
    viewer = signed_in_as(people["viewer"])
    refused = viewer.get("/api/letters/", {"place": place.pk, "q": '"card": "***"'})
    assert refused.status_code == 400 and "mask" in refused.json()["detail"]
    page = viewer.get(f"/places/{place.pk}/", {"q": "***"}).content.decode()
    assert 'class="error"' in page and "mask" in page and "matching-count" not in page


def test_page_and_api_agree_past_the_candidates_one_answer_confirms(letters, monkeypatch, people, signed_in_as):
    place, made = letters
    more = [store_letter(place, f"order {n} with {CARD}".encode() if n % 2 else f"order {n}".encode())
            for n in range(20, 30)]
    monkeypatch.setattr(selection, "CONFIRM_CAP", 3)
    viewer = signed_in_as(people["viewer"])
    readable = [made["json"].pk, made["escaped"].pk, made["text"].pk, made["header"].pk, made["plain"].pk,
                *(letter.pk for letter in more)]
    assert _api_ids(viewer, place=place.pk, q="order", page_size=2) == readable
    count, listed = _page(viewer, place, q="order")
    assert listed == readable
    assert count == "At least 3 letters match"  # the first 3 candidates, confirmed
    assert _api_ids(viewer, place=place.pk, q=CARD) == []


def test_a_viewer_cannot_find_a_letter_by_a_masked_consumer_or_host(memory_broker, people, signed_in_as):
    """The analytics link consumers and hosts to the letters page; those names come from
    framework headers, so a masked one finds nothing for a viewer, by page or API."""
    do_set_redaction_rule(actor="tests", kind="regex", pattern=r"4111\d{12}")
    place = memory_place(memory_broker)
    named = store_letter(place, b"order 12", details={"consumer": f"pay-{CARD}", "host": f"web-{CARD}"})
    store_letter(place, b"order 13", details={"consumer": "ship", "host": "web-2"})
    for key in ("consumer", "host"):
        value = named.envelope_details[key]
        viewer = signed_in_as(people["viewer"])  # one test client: signed in again for each person
        assert _api_ids(viewer, **{key: value}) == []
        assert f'href="/letters/{named.pk}/"' not in viewer.get("/letters/", {key: value}).content.decode()
        operator = signed_in_as(people["operator"])
        assert _api_ids(operator, **{key: value}) == [named.pk]
        assert f'href="/letters/{named.pk}/"' in operator.get("/letters/", {key: value}).content.decode()
    # What the viewer sees of the name finds it: searching stays useful.
    viewer = signed_in_as(people["viewer"])
    assert len(_api_ids(viewer, host="web-2")) == 1
    refused = viewer.get("/api/letters/", {"weekday": "9"})
    assert refused.status_code == 400 and "weekday must be a whole number from 1 to 7" in refused.content.decode()
