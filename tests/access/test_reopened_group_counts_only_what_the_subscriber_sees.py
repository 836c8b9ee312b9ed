"""Issue 28, finding 10: a resolved failure group spanning places A and B gets new letters in
both and reopens. Its owner, an operator limited to A, is told (through a real webhook receiver
on loopback) of A with A's new letters only, never a count including B's; his group page's
timeline says A's part. An unlimited owner is told the whole count."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from console.models import Delivery
from console.notifications.delivery import deliver
from console.services.channels import do_add_channel, do_subscribe
from console.services.group_work import reopen_groups
from tests.access.conftest import shows_nothing_of_b
from tests.web.factory import store_letter

pytestmark = pytest.mark.django_db


def _as(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def _dies_in(place, count: int) -> str:
    letters = [store_letter(place, f'{{"n": {n}}}'.encode(), origin="orders", exception_type="Timeout",
                            exception_message="upstream slow") for n in range(count)]
    return letters[0].fingerprint


def _send_all() -> None:
    for pk in Delivery.objects.filter(status="pending").values_list("pk", flat=True):
        deliver(pk)


@pytest.mark.parametrize("owner_is_limited", [True, False])
def test_a_reopened_group_tells_its_owner_only_the_letters_they_may_see(places_a_and_b, people, http,
                                                                        owner_is_limited):
    a, b = places_a_and_b.a, places_a_and_b.b
    owner = places_a_and_b.otto if owner_is_limited else people["admin"]
    fp = _dies_in(a, 1)
    assert _dies_in(b, 1) == fp
    do_subscribe(actor=people["admin"], channel=do_add_channel(actor=people["admin"], name="owner's", kind="webhook",
                                                               target=http.url),
                 events=["group.reopened"], user=owner)
    resolved = _as(owner).patch(f"/api/groups/{fp}/", {"status": "resolved", "owner": owner.username,
                                                        "ticket": "https://tracker.example.com/OPS-12"}, format="json")
    assert resolved.status_code == 200, resolved.content
    assert resolved.json()["ticket"] == "https://tracker.example.com/OPS-12"
    _dies_in(a, 2)
    _dies_in(b, 3)

    assert reopen_groups() == [fp]
    _send_all()
    (told,) = http.json()
    # Issue 51: the message names the group's owner and the ticket they work in.
    assert f"(owner {owner.username})" in told["subject"]
    assert (told["details"]["owner"], told["details"]["ticket"]) == (owner.username, "https://tracker.example.com/OPS-12")
    if owner_is_limited:
        assert (told["place"], told["details"]["new_letters"]) == (str(a), 2)
        assert "got 2 new letters" in told["subject"]
        shows_nothing_of_b(http.requests[0]["body"].decode())
        timeline = _as(owner).get(f"/api/groups/{fp}/").json()["timeline"]
        assert [(e["action"], e["details"].get("new_letters")) for e in timeline][-1] == ("group.reopened", 2)
    else:
        assert (told["place"], told["details"]["new_letters"]) == (None, 5)
