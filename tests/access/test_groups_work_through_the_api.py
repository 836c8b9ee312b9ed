"""Working together on failure groups through the API: status, owner and tags (audited, on the
group's timeline), notes, the filters of the list; a viewer may read but not change; a user
limited to place A cannot see or touch B's group; a resolved group that gets new letters is
reopened and its owner told."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from console.models import AuditEvent, Delivery
from console.notifications.delivery import deliver
from console.services.channels import do_add_channel, do_subscribe
from console.services.group_work import reopen_groups
from tests.notifications.receivers import HttpReceiver
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


def _as(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def test_status_owner_tags_notes_filters_and_timeline(memory_broker, operator, people):
    place = memory_place(memory_broker)
    timeout = store_letter(place, b'{"n": 1}', exception_type="TimeoutError", exception_message="slow")
    store_letter(place, b'{"n": 2}', exception_type="KeyError", exception_message="sku")
    fp = timeout.fingerprint
    api = _as(operator)
    assert {g["status"] for g in api.get("/api/groups/").json()} == {"new"}

    changed = api.patch(f"/api/groups/{fp}/", {"status": "investigating", "owner": "olga",
                                                "tags": ["billing", "urgent"], "reason": "mine"}, format="json")
    assert changed.status_code == 200, changed.content
    assert (changed.json()["status"], changed.json()["owner"], changed.json()["tags"]) == (
        "investigating", "olga", ["billing", "urgent"])
    note = api.post(f"/api/groups/{fp}/notes/", {"text": "<script>alert(1)</script> retry after 5pm"}, format="json")
    assert note.status_code == 201

    other = [g["fingerprint"] for g in api.get("/api/groups/").json() if g["fingerprint"] != fp]
    for query, expected in (("status=investigating", [fp]), ("owner=olga", [fp]), ("tag=urgent", [fp]),
                            ("tag=none", []), ("status=new", other)):
        assert [g["fingerprint"] for g in api.get(f"/api/groups/?{query}").json()] == expected, query
    detail = api.get(f"/api/groups/{fp}/").json()
    assert [n["text"] for n in detail["notes"]] == ["<script>alert(1)</script> retry after 5pm"]
    assert [(e["action"], e["actor"]) for e in detail["timeline"]] == [("group.changed", "olga"),
                                                                        ("group.note", "olga")]
    assert _as(people["viewer"]).get(f"/api/groups/{fp}/").status_code == 200
    assert _as(people["viewer"]).patch(f"/api/groups/{fp}/", {"status": "ignored"}, format="json").status_code == 403
    assert api.patch(f"/api/groups/{fp}/", {"owner": "nobody"}, format="json").status_code == 400


def test_a_limited_user_cannot_see_or_touch_another_places_group(places_a_and_b):
    otto, b_letter = places_a_and_b.otto, places_a_and_b.b_letter
    api = _as(otto)
    assert b_letter.fingerprint not in [g["fingerprint"] for g in api.get("/api/groups/").json()]
    assert api.get(f"/api/groups/{b_letter.fingerprint}/").status_code == 404
    assert api.patch(f"/api/groups/{b_letter.fingerprint}/", {"status": "ignored"}, format="json").status_code == 404
    assert api.post(f"/api/groups/{b_letter.fingerprint}/notes/", {"text": "x"}, format="json").status_code == 404
    assert not AuditEvent.objects.filter(action__startswith="group.").exists()


def test_a_resolved_group_with_new_letters_reopens_and_tells_its_owner(memory_broker, operator, admin):
    place = memory_place(memory_broker)
    letter = store_letter(place, b'{"n": 1}', exception_type="TimeoutError")
    receiver = HttpReceiver()
    try:
        channel = do_add_channel(actor=admin, name="olga's", kind="slack", target=receiver.url)
        do_subscribe(actor=admin, channel=channel, events=["group.reopened"], user=operator)
        do_subscribe(actor=admin, channel=do_add_channel(actor=admin, name="ada's", kind="slack",
                                                         target=receiver.url + "/ada"),
                     events=["group.reopened"], user=admin)  # not the owner: not told
        _as(operator).patch(f"/api/groups/{letter.fingerprint}/", {"status": "resolved", "owner": "olga"},
                            format="json")
        assert reopen_groups() == []
        store_letter(place, b'{"n": 2}', exception_type="TimeoutError")
        assert reopen_groups() == [letter.fingerprint]
        shown = _as(operator).get(f"/api/groups/{letter.fingerprint}/").json()
        assert shown["status"] == "new" and shown["timeline"][-1]["actor"] == "system:groups"
        for delivery in Delivery.objects.filter(status="pending"):
            deliver(delivery.pk)
        assert [r["path"] for r in receiver.requests] == ["/hook"]
        assert "got 1 new letters: reopened" in receiver.json()[0]["text"]
    finally:
        receiver.close()


def test_the_history_of_groups_is_read_by_the_unlimited_only(places_a_and_b, operator):
    from django.utils import timezone

    from console.models import FailureGroupHistory

    now = timezone.now()
    FailureGroupHistory.objects.create(fingerprint="f" * 32, exception_type="Declined", count=7, first_seen=now,
                                       last_seen=now, computed_at=now)
    assert [(g["fingerprint"], g["count"]) for g in _as(operator).get("/api/groups/history/").json()] == [("f" * 32, 7)]
    assert _as(places_a_and_b.otto).get("/api/groups/history/").json() == []
