"""Failure groups for a user limited to place A: the live groups (all places, one place, any
state) are counted over A's letters alone, and the history, which the pipeline counts over every
place at once, is not shown to them (issue 16, finding 1)."""

from __future__ import annotations

import pytest
from django.utils import timezone

from console.models import FailureGroupHistory
from tests.access.conftest import shows_nothing_of_b
from tests.web.factory import store_letter

pytestmark = pytest.mark.django_db


@pytest.fixture
def same_failure_in_b(places_a_and_b):
    """A letter in B that failed as A's did (same origin and exception: the same group)."""
    return store_letter(places_a_and_b.b, b'{"order": 8}', origin="orders", exception_type="OrderTimeout",
                        exception_message="order 7 timed out")


def _groups(response) -> dict[str, tuple[int, list[str]]]:
    """fingerprint -> (letters, place names) of the groups a groups page lists."""
    return {group.fingerprint: (group.count, [place.name for place in places])
            for group, places in response.context["rows"]}


@pytest.mark.parametrize("url", ["/groups/", "/groups/?state=any", "/groups/?state=held"])
def test_live_groups_show_a_alone_and_count_only_its_letters(url, places_a_and_b, same_failure_in_b, people,
                                                             signed_in_as):
    fingerprint = places_a_and_b.a_letter.fingerprint
    assert same_failure_in_b.fingerprint == fingerprint
    admin = signed_in_as(people["admin"]).get(url)
    assert "LedgerMismatchError" in admin.content.decode()
    assert _groups(admin)[fingerprint] == (2, ["orders.dlq", "billing.dlq"])
    otto = signed_in_as(places_a_and_b.otto).get(url)
    assert "OrderTimeout" in otto.content.decode() and "orders.dlq" in otto.content.decode()
    shows_nothing_of_b(otto.content.decode())
    assert _groups(otto) == {fingerprint: (1, ["orders.dlq"])}


def test_the_groups_of_place_a_leave_out_bs_share(places_a_and_b, same_failure_in_b, signed_in_as):
    page = signed_in_as(places_a_and_b.otto).get(f"/places/{places_a_and_b.a.pk}/groups/?state=any")
    assert page.status_code == 200
    shows_nothing_of_b(page.content.decode())
    assert signed_in_as(places_a_and_b.otto).get(f"/places/{places_a_and_b.b.pk}/groups/").status_code == 404


def test_the_history_of_every_place_is_not_shown_to_a_limited_user(places_a_and_b, people, signed_in_as):
    now = timezone.now()
    FailureGroupHistory.objects.create(
        fingerprint="f" * 32, exception_type="LedgerMismatchError", sample_message="ledger 991 out of balance",
        count=40, first_seen=now, last_seen=now, origins=["billing", "orders"], brokers=["mem"], computed_at=now)
    admin_page = signed_in_as(people["admin"]).get("/groups/history/").content.decode()
    assert "LedgerMismatchError" in admin_page
    page = signed_in_as(places_a_and_b.otto).get("/groups/history/").content.decode()
    shows_nothing_of_b(page)
    assert "f" * 32 not in page and "your access is limited" in page
