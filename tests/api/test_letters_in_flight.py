"""A letter a replay or move has taken, its outcome not recorded yet, is in flight
(console.models.LetterFlight; its row stays ``held``, issue 32). People read it as
``replaying``; a purge, a mark-failed and an edit leave it alone; and a job that ends with
letters still in flight (its worker died, then it was cancelled) hands them back: held, with the
replay id they went out with, and in the rules' inbox."""

from __future__ import annotations

import pytest

from console.jobs.control import claim, finish
from console.jobs.door.requests import request_job
from console.jobs.door.runner import run_job
from console.models import DeadLetter, Job, LetterFlight, LetterState, RuleInbox
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


@pytest.fixture
def flying(memory_broker, operator):
    """Two held letters of a place; the first taken into flight by a replay job whose worker
    died (claimed, running, never recorded)."""
    place = memory_place(memory_broker)
    taken, other = store_letter(place, b'{"n": 1}'), store_letter(place, b'{"n": 2}')
    job = request_job("replay", actor=operator, reason="the worker will die", ids=[taken.pk])
    claim(job.pk)
    LetterFlight.objects.create(letter=taken, job=job, replay_id="rid-in-the-air")
    return job, taken, other


def _states(api, query: str = "") -> dict[int, str]:
    answer = api.get(f"/api/letters/{query}")
    assert answer.status_code == 200, answer.content
    return {row["id"]: row["state"] for row in answer.json()["results"]}


def test_it_reads_replaying_and_the_replaying_filter_finds_it(api, flying):
    _, taken, other = flying
    assert _states(api) == {taken.pk: "replaying", other.pk: "held"}
    assert _states(api, "?state=replaying") == {taken.pk: "replaying"}
    assert _states(api, "?state=held") == {taken.pk: "replaying", other.pk: "held"}  # still held until confirmed
    assert _states(api, "?state=failed,replaying") == {taken.pk: "replaying"}
    assert api.get(f"/api/letters/{taken.pk}/").json()["state"] == "replaying"
    assert api.get(f"/api/letters/{other.pk}/").json()["state"] == "held"


def test_the_letter_page_shows_it_replaying_and_offers_no_action(client, operator, flying):
    _, taken, _ = flying
    client.force_login(operator)
    page = client.get(f"/letters/{taken.pk}/").content.decode()
    assert '<span class="state state-replaying">replaying</span>' in page
    assert "Edit and replay" not in page


@pytest.mark.parametrize("action", ["purge", "mark_failed"])
def test_purge_and_mark_failed_leave_it_alone(admin, flying, action):
    _, taken, other = flying
    job = run_job(request_job(action, actor=admin, reason="clean up", ids=[taken.pk, other.pk]).pk)
    assert job == "succeeded"
    done = Job.objects.filter(kind=action).get()
    assert (done.done, done.skipped) == (1, 1)
    taken.refresh_from_db()
    assert taken.state == LetterState.HELD and taken.body_bytes == b'{"n": 1}'
    assert LetterFlight.objects.filter(letter=taken).exists()
    assert DeadLetter.objects.get(pk=other.pk).state != LetterState.HELD


def test_an_edit_is_refused(api, flying):
    _, taken, _ = flying
    answer = api.post(f"/api/letters/{taken.pk}/edit-replay/", {"body": "{}", "reason": "fix"}, format="json")
    assert answer.status_code == 400 and "is replaying" in answer.json()["detail"]
    assert DeadLetter.objects.count() == 2


def test_a_job_that_ends_hands_its_letters_back_with_their_replay_id(flying):
    job, taken, _ = flying
    RuleInbox.objects.all().delete()
    finish(job, Job.Status.CANCELLED, "cancelled after its worker died")
    taken.refresh_from_db()
    assert not LetterFlight.objects.exists()
    assert taken.state == LetterState.HELD and taken.replay_id == "rid-in-the-air"
    assert list(RuleInbox.objects.values_list("letter_id", flat=True)) == [taken.pk]


def test_another_replay_skips_it_and_the_resumed_job_sends_it_with_its_replay_id(memory_broker, operator, flying):
    fake, _ = memory_broker
    job, taken, other = flying
    second = request_job("replay", actor=operator, reason="second", ids=[taken.pk, other.pk])
    assert run_job(second.pk) == "succeeded"
    assert Job.objects.get(pk=second.pk).skipped == 1
    Job.objects.filter(pk=job.pk).update(heartbeat_at=None)  # its worker is gone
    assert run_job(job.pk) == "succeeded"
    taken.refresh_from_db()
    assert taken.state == LetterState.REPLAYED and taken.replay_id == "rid-in-the-air"
    sent = [message.headers.get("x-dlo-replay-id") for message in fake.queue(taken.origin_queue)]
    assert "rid-in-the-air" in sent and not LetterFlight.objects.exists()
