"""A script whose groups make it a viewer reads, with the provider's token, what a viewer reads:
its place's letters with the masked value hidden in the list and the letter (a body holding a
card number the site's redaction rule masks), and nothing of the other place."""

from __future__ import annotations

import pytest

from console.services.claim_mappings import do_set_mapping
from console.services.redaction import do_set_redaction_rule
from tests.access.masked_value import CARD, CARD_RULE, leaks
from tests.web.factory import store_letter

pytestmark = pytest.mark.django_db


def test_a_viewer_token_never_reads_the_masked_value(oidc_settings, places, bearer):
    provider = oidc_settings
    kind, pattern = CARD_RULE
    do_set_redaction_rule(actor="tests", kind=kind, pattern=pattern)
    letter = store_letter(places.billing, f'{{"card": "{CARD}", "ledger": 991}}'.encode(), origin="billing")
    do_set_mapping(actor="tests", group="billing-readers", role="viewer", places=[places.billing])
    provider.set_script_groups(["billing-readers"])
    client = bearer(provider.client_credentials_token())

    listing = client.get("/api/letters/")
    assert listing.status_code == 200
    assert sorted(row["id"] for row in listing.json()["results"]) == sorted([places.billing_letter.pk, letter.pk])
    detail = client.get(f"/api/letters/{letter.pk}/")
    assert detail.status_code == 200 and "991" in detail.content.decode()  # the body is there, the card is not
    for answer in (listing, detail):
        assert not leaks(answer.content)
