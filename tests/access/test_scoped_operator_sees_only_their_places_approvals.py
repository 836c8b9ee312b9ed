"""Jobs waiting for a second person are listed to a user limited to place A only when they act
on A: ``/approvals/`` and ``/api/approvals/`` name nothing of place B (issue 16, finding 1)."""

from __future__ import annotations

import pytest

from console.jobs.door.requests import request_job
from tests.access.conftest import shows_nothing_of_b

pytestmark = [pytest.mark.django_db, pytest.mark.approvals]


@pytest.fixture
def waiting(places_a_and_b, people):
    """(purge of A's letter, purge of B's letter), both waiting for approval, asked by the admin
    by letter ids (so neither job is labelled with a place)."""
    return tuple(request_job("purge", actor=people["admin"], reason="cleanup", ids=[letter.pk])
                 for letter in (places_a_and_b.a_letter, places_a_and_b.b_letter))


def test_the_approvals_api_lists_the_jobs_on_a_only(places_a_and_b, waiting, people, signed_in_as):
    in_a, in_b = waiting
    assert {j["id"] for j in signed_in_as(people["admin"]).get("/api/approvals/").json()["results"]} == {
        in_a.pk, in_b.pk}
    answer = signed_in_as(places_a_and_b.otto).get("/api/approvals/")
    assert [j["id"] for j in answer.json()["results"]] == [in_a.pk]
    shows_nothing_of_b(answer.content.decode())


def test_the_approvals_page_lists_the_jobs_on_a_only(places_a_and_b, waiting, signed_in_as):
    in_a, in_b = waiting
    page = signed_in_as(places_a_and_b.otto).get("/approvals/").content.decode()
    assert f'href="/jobs/{in_a.pk}/"' in page and f'href="/jobs/{in_b.pk}/"' not in page
    shows_nothing_of_b(page)


def test_a_waiting_job_on_b_does_not_exist_for_the_user(places_a_and_b, waiting, signed_in_as):
    _, in_b = waiting
    otto = signed_in_as(places_a_and_b.otto)
    assert otto.get(f"/jobs/{in_b.pk}/").status_code == 404
    assert otto.get(f"/api/jobs/{in_b.pk}/").status_code == 404
    assert otto.post(f"/api/jobs/{in_b.pk}/approve/", {"reason": "ok"}).status_code == 404
