"""The failure envelope's exception type, message and stack and its details are copied from
headers that frameworks write (Spring's ``x-exception-*``), so they hold whatever the message
held: a viewer reads them masked on the letter page, in the API, and in the failure groups'
sample exceptions, live and from history (issue 16, finding 3). An operator reads them as they are."""

from __future__ import annotations

import json

import pytest
from django.utils import timezone

from console.models import FailureGroupHistory
from console.services.redaction import do_set_redaction_rule
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db

CARD = "4111111111111111"
HEADERS = {
    "x-exception-message": f"card {CARD} was declined",
    "x-exception-stacktrace": f"com.shop.CardDeclined: card {CARD} was declined\n\tat com.shop.Pay.charge(Pay.java:42)",
    "x-original-queue": "orders",
}


@pytest.fixture
def letter(memory_broker):
    do_set_redaction_rule(actor="tests", kind="regex", pattern=r"4111\d{12}")
    place = memory_place(memory_broker)
    letter = store_letter(place, b"order 7", headers=HEADERS, details={"note": f"paid with {CARD}"})
    assert CARD in letter.exception_message and CARD in letter.exception_stack  # as captured
    now = timezone.now()
    FailureGroupHistory.objects.create(
        fingerprint=letter.fingerprint or "f" * 32, exception_type="com.shop.CardDeclined", count=1,
        sample_message=letter.exception_message, first_seen=now, last_seen=now, computed_at=now,
        consumers=[f"consumer-{CARD}"], hosts=["pay-1"])
    return letter


def test_the_api_masks_the_exception_for_a_viewer(letter, people, signed_in_as):
    viewer = signed_in_as(people["viewer"])
    detail = viewer.get(f"/api/letters/{letter.pk}/").json()
    assert detail["exception_type"] == "com.shop.CardDeclined"
    assert detail["exception_message"] == "card *** was declined"
    assert detail["exception_stack"].startswith("com.shop.CardDeclined: card *** was declined")
    assert detail["envelope_details"]["note"] == "paid with ***"
    listed = viewer.get("/api/letters/", {"place": letter.place_id}).json()["results"]
    assert listed[0]["exception_message"] == "card *** was declined"
    assert CARD not in json.dumps(detail) + json.dumps(listed)
    seen = signed_in_as(people["operator"]).get(f"/api/letters/{letter.pk}/").json()
    assert seen["exception_message"] == f"card {CARD} was declined"


def test_the_letter_page_masks_the_exception_for_a_viewer(letter, people, signed_in_as):
    page = signed_in_as(people["viewer"]).get(f"/letters/{letter.pk}/").content.decode()
    assert "card *** was declined" in page and "Pay.java:42" in page and CARD not in page
    assert CARD in signed_in_as(people["operator"]).get(f"/letters/{letter.pk}/").content.decode()


@pytest.mark.parametrize("url", ["/groups/", "/groups/?state=any", "/places/{place}/groups/", "/groups/history/"])
def test_failure_groups_show_the_sample_exception_masked_to_a_viewer(letter, url, people, signed_in_as):
    url = url.format(place=letter.place_id)
    page = signed_in_as(people["viewer"]).get(url).content.decode()
    assert "card *** was declined" in page and CARD not in page
    assert CARD in signed_in_as(people["operator"]).get(url).content.decode()
