"""Issue 48's guards: an export holds exactly what its reader may see. A viewer given the export
right exports a place under a redaction rule in every format, and no form of the masked card
number is in the file (plain, JSON-escaped, base64; Parquet read back); the letters come marked
masked. An operator limited to place A exports nothing of B, by a filter or by B's failure group.
A viewer without the right gets 403 from both ways out."""

from __future__ import annotations

import json

import pytest
from django.contrib.auth.models import Permission
from rest_framework.test import APIClient

from console.access.roles import EXPORT
from console.services.redaction import do_set_redaction_rule
from tests.access.conftest import shows_nothing_of_b
from tests.access.masked_value import CARD, CARD_RULE, leaks
from tests.exports.helpers import FORMATS, as_text, downloaded, records
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


def _client(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


@pytest.mark.parametrize("format_name", FORMATS)
def test_a_viewers_export_holds_no_masked_value(format_name, memory_broker, people):
    viewer = people["viewer"]
    viewer.user_permissions.add(Permission.objects.get(codename=EXPORT))
    place = memory_place(memory_broker, "payments")
    store_letter(place, json.dumps({"card": CARD, "amount": 12}).encode(), headers={"x-card": CARD},
                 exception_type=f"Card{CARD}Declined", exception_message=f"card {CARD} declined")
    store_letter(place, f"plain text with {CARD} inside".encode())
    store_letter(place, b"\xff\xfe" + CARD.encode())  # binary: a masked reader is not shown it at all
    do_set_redaction_rule(actor=people["admin"], kind=CARD_RULE[0], pattern=CARD_RULE[1])

    data = downloaded(_client(viewer).get("/api/letters/export/", {"format": format_name}))
    assert leaks(as_text(format_name, data)) == []
    found = records(format_name, data)
    assert len(found) == 3 and all(row["masked"] in (True, "true") for row in found)
    assert found[0]["body_encoding"] == "text" and "***" in found[0]["body"]
    assert found[2]["body_encoding"] == "hidden" and found[2]["body"] in (None, "")
    # An operator (who reads content unmasked) exports the card: the rule is the viewer's mask.
    assert CARD in as_text(format_name, downloaded(_client(people["operator"]).get(
        "/api/letters/export/", {"format": format_name})))


@pytest.mark.parametrize("format_name", FORMATS)
def test_an_operator_limited_to_a_exports_nothing_of_b(format_name, places_a_and_b):
    otto = _client(places_a_and_b.otto)
    data = downloaded(otto.get("/api/letters/export/", {"format": format_name}))
    assert [int(row["id"]) for row in records(format_name, data)] == [places_a_and_b.a_letter.pk]
    shows_nothing_of_b(as_text(format_name, data))
    by_place = downloaded(otto.get("/api/letters/export/", {"format": format_name, "place": places_a_and_b.b.pk}))
    assert records(format_name, by_place) == []
    assert otto.get(f"/api/groups/{places_a_and_b.b_letter.fingerprint}/export/",
                    {"format": format_name}).status_code == 404  # as if B's group did not exist


def test_a_viewer_without_the_right_gets_403(people, places_a_and_b):
    viewer = _client(people["viewer"])
    assert viewer.get("/api/letters/export/", {"format": "csv"}).status_code == 403
    assert viewer.get(f"/api/groups/{places_a_and_b.a_letter.fingerprint}/export/").status_code == 403
