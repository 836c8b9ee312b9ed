"""An operator limited to place A reads the audit of A and nothing of place B: not through
``/api/audit/``, the audit page, its CSV and JSON exports, a letter's events or the letters of an
event; not even B's name (issue 16, finding 1). The admin, unlimited, reads both."""

from __future__ import annotations

import pytest
from django.db import connection, transaction
from django.db.utils import DatabaseError

from console.jobs.door.requests import request_job
from console.models import AuditEvent, DeadLetter, RoleScope
from console.services.roles import do_grant_role
from tests.access.conftest import shows_nothing_of_b

pytestmark = pytest.mark.django_db

AUDIT_READS = ("/api/audit/", "/audit/", "/audit/export.csv", "/audit/export.json")


def _read(client, url: str) -> str:
    response = client.get(url)
    assert response.status_code == 200, (url, response.status_code)
    return b"".join(response.streaming_content).decode() if response.streaming else response.content.decode()


@pytest.fixture
def edited_in_b(places_a_and_b, people):
    """The admin edits B's letter and replays it: the audit keeps the body diff."""
    return request_job("edit_replay", letter=places_a_and_b.b_letter,
                       body=b'{"ledger": 991, "note": "card-4111-in-the-diff"}', headers={}, actor=people["admin"],
                       reason="fix the ledger")


def test_audit_api_page_and_exports_show_a_and_nothing_of_b(places_a_and_b, edited_in_b, people, signed_in_as):
    admin = signed_in_as(people["admin"])
    assert "card-4111-in-the-diff" in _read(admin, "/api/audit/?action=edit_replay")  # the diff is there to hide
    otto = signed_in_as(places_a_and_b.otto)
    events = otto.get("/api/audit/").json()["results"]
    assert {e["place"] for e in events} == {"orders.dlq"}
    assert places_a_and_b.a_letter.pk in {i for e in events for i in e["letter_ids"]}
    for url in AUDIT_READS:
        text = _read(otto, url)
        assert "orders.dlq" in text, url
        shows_nothing_of_b(text)


def test_filters_do_not_reach_b_events_either(places_a_and_b, edited_in_b, signed_in_as):
    otto = signed_in_as(places_a_and_b.otto)
    b_letter = places_a_and_b.b_letter.pk
    for query in ("place=billing.dlq", f"job={edited_in_b.pk}", f"letter={b_letter}", "action=edit_replay"):
        assert otto.get(f"/api/audit/?{query}").json()["results"] == [], query
        assert "No audit events." in _read(otto, f"/audit/?{query}"), query
        assert _read(otto, f"/audit/export.json?{query}").strip() == "[\n]", query
        assert _read(otto, f"/audit/export.csv?{query}").strip().count("\n") == 0, query  # the header line alone


def test_a_letters_events_and_an_events_letters_stay_in_scope(places_a_and_b, edited_in_b, signed_in_as):
    otto = signed_in_as(places_a_and_b.otto)
    b_event = AuditEvent.objects.get(action="edit_replay")
    assert otto.get(f"/letters/?event={b_event.pk}").status_code == 404
    a_page = _read(otto, f"/letters/{places_a_and_b.a_letter.pk}/")
    shows_nothing_of_b(a_page)
    api_events = otto.get(f"/api/letters/{places_a_and_b.a_letter.pk}/").json()["audit"]
    assert api_events and all(e["place"] == "orders.dlq" for e in api_events)


def test_an_event_over_a_and_b_is_hidden_from_a_user_limited_to_a(places_a_and_b, people, signed_in_as):
    both = request_job("mark_failed", actor=people["admin"], reason="sweep",
                          ids=[places_a_and_b.a_letter.pk, places_a_and_b.b_letter.pk])
    otto = signed_in_as(places_a_and_b.otto)
    assert otto.get(f"/api/audit/?job={both.pk}").json()["results"] == []
    assert len(signed_in_as(people["admin"]).get(f"/api/audit/?job={both.pk}").json()["results"]) == 1


def test_broker_wide_events_are_for_users_limited_to_the_broker(places_a_and_b, people, signed_in_as):
    """Adding and discovering the broker concern it as a whole (they may list every place): a
    user limited to one of its places does not see them, one limited to the broker does."""
    otto = signed_in_as(places_a_and_b.otto)
    assert not {"broker.add", "broker.discover"} & {e["action"] for e in otto.get("/api/audit/").json()["results"]}
    vera = people["viewer"]
    RoleScope.objects.create(user=vera, broker=places_a_and_b.a.broker)
    actions = {e["action"] for e in signed_in_as(vera).get("/api/audit/").json()["results"]}
    assert {"broker.add", "broker.discover", "capture"} <= actions


def test_events_naming_no_broker_or_place_are_only_for_users_without_limits(places_a_and_b, people, signed_in_as):
    with transaction.atomic():
        do_grant_role(people["viewer"], "operator", actor=people["admin"], reason="on call")
    assert signed_in_as(places_a_and_b.otto).get("/api/audit/?action=grant_role").json()["results"] == []
    assert len(signed_in_as(people["admin"]).get("/api/audit/?action=grant_role").json()["results"]) == 1


def test_a_user_whose_only_place_was_removed_reads_no_audit_at_all(places_a_and_b, signed_in_as):
    DeadLetter.objects.filter(place=places_a_and_b.a).delete()  # letters keep their place from going
    places_a_and_b.a.delete()
    otto = signed_in_as(places_a_and_b.otto)
    assert otto.get("/api/audit/").json()["results"] == []
    assert "orders.dlq" not in _read(otto, "/audit/export.csv")


def test_what_an_event_concerns_is_append_only(places_a_and_b):
    """Moving an event of B to A (or dropping its row) would show it to a user limited to A."""
    from console.models import AuditEventPlace

    concern = AuditEventPlace.objects.filter(place_id=places_a_and_b.b.pk).first()
    for statement, params in (("UPDATE console_auditeventplace SET place_id = %s WHERE id = %s",
                               [places_a_and_b.a.pk, concern.pk]),
                              ("DELETE FROM console_auditeventplace WHERE id = %s", [concern.pk])):
        with pytest.raises(DatabaseError, match="append-only"), transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(statement, params)
    assert AuditEventPlace.objects.get(pk=concern.pk).place_id == places_a_and_b.b.pk
