"""A user limited to place A, on a broker that also holds place B: the broker's page, the jobs
list and log, the move suggestions and discovery's answer name nothing of B; their own job over
A's letters, asked for by the API (so labelled with no place), is theirs to see (issue 16,
finding 1)."""

from __future__ import annotations

import pytest

from console.jobs.door.requests import request_job
from tests.access.conftest import shows_nothing_of_b

pytestmark = pytest.mark.django_db


def test_the_brokers_page_lists_place_a_and_not_b(places_a_and_b, people, signed_in_as):
    broker = places_a_and_b.a.broker
    assert "billing.dlq" in signed_in_as(people["admin"]).get(f"/brokers/{broker.pk}/").content.decode()
    page = signed_in_as(places_a_and_b.otto).get(f"/brokers/{broker.pk}/")
    assert page.status_code == 200 and "orders.dlq" in page.content.decode()
    shows_nothing_of_b(page.content.decode())


def test_jobs_list_and_log_show_the_users_own_job_and_nothing_of_b(places_a_and_b, people, signed_in_as):
    otto = signed_in_as(places_a_and_b.otto)
    mine = otto.post("/api/jobs/", {"action": "mark_failed", "letters": [places_a_and_b.a_letter.pk],
                                    "reason": "give up on order 7"}, content_type="application/json")
    assert mine.status_code == 202, mine.content
    theirs = request_job("mark_failed", actor=people["admin"], reason="give up", ids=[places_a_and_b.b_letter.pk])
    mine_id = mine.json()["id"]
    assert [j["id"] for j in otto.get("/api/jobs/").json()["results"]] == [mine_id]
    jobs_page = otto.get("/jobs/").content.decode()
    assert f'href="/jobs/{mine_id}/"' in jobs_page and f'href="/jobs/{theirs.pk}/"' not in jobs_page
    shows_nothing_of_b(jobs_page)
    assert otto.get(f"/jobs/{mine_id}/").status_code == 200
    assert otto.get(f"/api/jobs/{mine_id}/").status_code == 200
    assert otto.get(f"/jobs/{theirs.pk}/").status_code == 404
    assert otto.get(f"/api/jobs/{theirs.pk}/").status_code == 404


def test_move_suggestions_on_place_a_name_no_other_place(places_a_and_b, people, signed_in_as):
    url = f"/places/{places_a_and_b.a.pk}/"
    assert 'value="billing.dlq"' in signed_in_as(people["admin"]).get(url).content.decode()
    page = signed_in_as(places_a_and_b.otto).get(url).content.decode()
    assert 'value="orders.dlq"' in page or 'value="orders"' in page
    shows_nothing_of_b(page)


def test_discovery_answers_with_the_places_the_user_may_see(places_a_and_b, signed_in_as):
    found = signed_in_as(places_a_and_b.otto).post(f"/api/brokers/{places_a_and_b.a.broker.pk}/discover/")
    assert found.status_code == 200 and [p["name"] for p in found.json()] == ["orders.dlq"]
    shows_nothing_of_b(found.content.decode())


def test_a_jobs_page_counts_letters_arrived_since_only_in_the_users_places(places_a_and_b, people, signed_in_as):
    """otto's job by filter (origin "orders", held in A alone when he asked); then a letter of
    that origin dies in B: his job page does not count it, the admin's does."""
    from tests.web.factory import store_letter

    job = request_job("mark_failed", actor=places_a_and_b.otto, reason="orders timed out",
                         filter={"origin": "orders"})
    store_letter(places_a_and_b.b, b"{}", origin="orders")
    assert "1 matching letter arrived since" in signed_in_as(people["admin"]).get(f"/jobs/{job.pk}/").content.decode()
    page = signed_in_as(places_a_and_b.otto).get(f"/jobs/{job.pk}/").content.decode()
    assert "arrived since" not in page
