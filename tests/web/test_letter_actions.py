"""Bulk actions from a place's page make jobs through the services, which audit them."""

from __future__ import annotations

import pytest
from django.urls import reverse

from console.brokers.memory.adapter import MemoryAdapter
from console.models import AuditEvent, Job
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


@pytest.fixture
def letters(place):
    return [store_letter(place, f"order {i}".encode(), origin="orders" if i < 3 else "payments") for i in range(5)]


def _act(client, place, **data):
    return client.post(reverse("place-action", args=[place.pk]), data)


def test_ticked_letters_are_marked_failed_by_a_job(signed_in, place, letters, queued_jobs,
                                                   django_capture_on_commit_callbacks):
    ticked = [letters[0].pk, letters[2].pk]
    with django_capture_on_commit_callbacks(execute=True):
        response = _act(signed_in, place, action="mark_failed", reason="bad data INC-9", ids=ticked)
    job = Job.objects.get()
    assert response.status_code == 302 and response["Location"] == reverse("job", args=[job.pk])
    assert (job.kind, job.reason, job.actor_name, job.selection) == ("mark_failed", "bad data INC-9", "olga",
                                                                     {"ids": ticked})
    event = AuditEvent.objects.get(action="job.requested", job_id=job.pk)
    assert event.letter_ids == ticked and event.reason == "bad data INC-9" and event.actor_name == "olga"
    assert queued_jobs == [job.pk]  # handed to Celery once the transaction commits


def test_select_all_matching_sends_the_filter_of_the_page(signed_in, place, letters):
    _act(signed_in, place, action="replay", reason="fixed", select_all="1", **{"filter-origin": "payments"})
    job = Job.objects.get()
    assert job.selection["filter"] == {"origin": "payments", "place": str(place.pk)}
    assert job.total == 2


def test_the_page_carries_its_filter_into_the_action_form(signed_in, place, letters):
    html = signed_in.get(reverse("place", args=[place.pk]), {"origin": "payments", "q": "order"}).content.decode()
    assert 'name="filter-origin" value="payments"' in html and 'name="filter-q" value="order"' in html
    assert "Select all 2 matching" in html


def test_move_needs_a_target_and_takes_it(signed_in, place, letters):
    response = _act(signed_in, place, action="move", reason="park", ids=[letters[0].pk])
    assert response.status_code == 302 and not Job.objects.exists()
    _act(signed_in, place, action="move", reason="park", target="orders.parked", ids=[letters[0].pk])
    assert Job.objects.get().target == "orders.parked"


@pytest.mark.parametrize(
    "data, message",
    [
        ({"action": "purge", "reason": ""}, "This field is required."),
        ({"action": "purge", "reason": "cleanup"}, "Tick some letters, or select all matching."),
        ({"action": "explode", "reason": "x", "select_all": "1"}, "Select a valid choice."),
    ],
)
def test_incomplete_actions_are_refused_with_a_message(signed_in, place, letters, data, message):
    response = signed_in.post(reverse("place-action", args=[place.pk]), data, follow=True)
    assert message in response.content.decode()
    assert not Job.objects.exists()


def test_letters_of_another_place_cannot_be_smuggled_in(signed_in, place, letters, memory_broker):
    other = memory_place(memory_broker, origin="billing")
    stranger = store_letter(other, b"not yours")
    response = signed_in.post(reverse("place-action", args=[place.pk]),
                              {"action": "purge", "reason": "x", "ids": [stranger.pk]}, follow=True)
    assert "no letters selected" in response.content.decode()
    assert not Job.objects.exists()


def test_actions_the_adapter_lacks_are_not_offered(signed_in, place, letters, monkeypatch):
    html = signed_in.get(reverse("place", args=[place.pk])).content.decode()
    assert '<option value="move">Move to queue</option>' in html
    monkeypatch.setattr(MemoryAdapter, "can_move_to_destination", False)
    html = signed_in.get(reverse("place", args=[place.pk])).content.decode()
    assert '<option value="move">' not in html and "Move to a chosen queue: no" in html
    _act(signed_in, place, action="move", reason="x", target="elsewhere", ids=[letters[0].pk])
    assert not Job.objects.exists()
