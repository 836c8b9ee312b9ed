"""Bulk actions through the API: replay, move, purge and mark failed as jobs (run here by
calling the runner, standing in for the Celery worker), their preview, control and audit."""

from __future__ import annotations

import pytest

from console.jobs.door.runner import run_job
from console.models import DeadLetter
from tests.api.helpers import dead_message

pytestmark = pytest.mark.django_db


def start(api, **payload) -> dict:
    response = api.post("/api/jobs/", payload, format="json")
    assert response.status_code == 202, response.content
    return response.json()


def finish(api, job: dict) -> dict:
    assert run_job(job["id"]) == "succeeded"
    return api.get(f"/api/jobs/{job['id']}/").json()


def states(ids) -> list[str]:
    return list(DeadLetter.objects.filter(id__in=ids).order_by("id").values_list("state", flat=True))


def test_replay_by_ids_puts_the_letters_back_in_their_origin(api, capture, memory_broker):
    fake, _ = memory_broker
    ids = capture([dead_message(f"order {i}") for i in range(3)])
    job = start(api, action="replay", letters=ids[:2], reason="bug 1234 fixed", ticket="OPS-7")
    assert (job["kind"], job["status"], job["total"], job["actor"]) == ("replay", "queued", 2, "olga")
    done = finish(api, job)
    assert (done["status"], done["done"], done["failed"], done["percent"]) == ("succeeded", 2, 0, 100)
    assert done["started_at"] and done["finished_at"] and done["log"]
    assert [m.body for m in fake.queue("orders")] == [b"order 0", b"order 1"]
    assert all(m.headers["x-dlo-replay-id"] for m in fake.queue("orders"))
    assert states(ids) == ["replayed", "replayed", "held"]


def test_replay_by_filter_acts_on_the_matching_letters_only(api, capture, memory_broker):
    fake, _ = memory_broker
    orders = capture([dead_message("o1"), dead_message("o2")])
    invoices = capture([dead_message("i1", origin="invoices")], origin="invoices")
    finish(api, start(api, action="replay", filter={"origin": "invoices"}, reason="retry invoices"))
    assert [m.body for m in fake.queue("invoices")] == [b"i1"]
    assert len(fake.queue("orders")) == 0
    assert states(orders + invoices) == ["held", "held", "replayed"]


def test_move_sends_letters_to_the_chosen_queue(api, capture, memory_broker):
    fake, _ = memory_broker
    fake.queue("orders.parking")
    ids = capture([dead_message("park me")])
    finish(api, start(api, action="move", letters=ids, target="orders.parking", reason="park"))
    assert [m.body for m in fake.queue("orders.parking")] == [b"park me"]
    assert len(fake.queue("orders")) == 0


@pytest.mark.role("admin")  # purging is the admin's
def test_mark_failed_then_purge_by_filter(api, capture):
    ids = capture([dead_message("a"), dead_message("b"), dead_message("c")])
    finish(api, start(api, action="mark_failed", letters=[ids[0]], reason="won't fix"))
    assert states(ids) == ["failed", "held", "held"]
    purged = finish(api, start(api, action="purge", filter={"state": "failed,held"}, reason="retention"))
    assert purged["done"] == 3
    assert states(ids) == ["purged"] * 3
    letter = api.get(f"/api/letters/{ids[1]}/").json()
    assert letter["body"] == {"encoding": "text", "text": ""} and letter["body_erased"] is True


@pytest.mark.parametrize("payload, field", [
    ({"action": "replay", "letters": [1]}, "reason"),
    ({"action": "replay", "letters": [1], "reason": "   "}, "reason"),
    ({"action": "explode", "letters": [1], "reason": "x"}, "action"),
    ({"action": "replay", "filter": {"origni": "orders"}, "reason": "x"}, "filter"),
    ({"action": "replay", "letters": [], "reason": "x"}, "letters"),
])
def test_an_incomplete_job_request_is_refused(api, capture, payload, field):
    capture([dead_message("a")])
    response = api.post("/api/jobs/", payload, format="json")
    assert response.status_code == 400
    assert field in response.json()


@pytest.mark.parametrize("payload, message", [
    ({"action": "move", "filter": {}, "reason": "x"}, "a move needs a target queue"),
    ({"action": "replay", "filter": {}, "target": "q", "reason": "x"}, "a replay job does not take target"),
    ({"action": "replay", "reason": "x"}, "give letters (ids) or a filter"),
    ({"action": "replay", "letters": [1], "filter": {}, "reason": "x"},
     "give either letters (ids) or a filter, not both"),
    ({"action": "replay", "filter": {"origin": "nowhere"}, "reason": "x"}, "no letters match this selection"),
])
def test_a_job_the_console_refuses_says_why(api, capture, payload, message):
    capture([dead_message("a")])
    response = api.post("/api/jobs/", payload, format="json")
    assert response.status_code == 400
    assert response.json() == {"detail": message}
    assert api.get("/api/jobs/").json()["results"][0]["kind"] == "capture"


def test_preview_counts_what_a_job_would_touch(api, capture):
    ids = capture([dead_message("o1"), dead_message("o2")])
    capture([dead_message("i1", origin="invoices")], origin="invoices")
    response = api.post("/api/jobs/preview/", {"filter": {"state": "held"}}, format="json")
    assert response.status_code == 200
    preview = response.json()
    assert preview["count"] == 3
    assert preview["by_origin"] == [
        {"broker": "mem", "origin_queue": "orders", "count": 2},
        {"broker": "mem", "origin_queue": "invoices", "count": 1},
    ]
    assert preview["sample"][:2] == ids and preview["arrived_since"] == 0
    by_ids = api.post("/api/jobs/preview/", {"letters": ids[:1]}, format="json").json()
    assert (by_ids["count"], by_ids["sample"]) == (1, ids[:1])


def test_preview_counts_by_broker_and_origin_across_places(api, capture, monkeypatch):
    from console.brokers.memory.adapter import MemoryBroker
    from console.services import jobs
    from console.services.brokers import do_add_broker

    capture([dead_message("o1"), dead_message("o2")])
    capture([dead_message("i1", origin="invoices")], origin="invoices")
    MemoryBroker.instances.pop("other", None)
    other = MemoryBroker.named("other")
    broker = do_add_broker(actor="tests", name="other", kind="memory", url="memory://other")
    other.queue("orders")
    other.queue("orders.dlq").extend([dead_message("p1"), dead_message("p2"), dead_message("p3")])
    (place,) = [p for p in api.post(f"/api/brokers/{broker.pk}/discover/").json() if p["name"] == "orders.dlq"]
    capture_job = api.post(f"/api/places/{place['id']}/capture/", {"reason": "triage"}, format="json").json()
    assert run_job(capture_job["id"]) == "succeeded"

    preview = api.post("/api/jobs/preview/", {"filter": {"state": "held"}}, format="json").json()
    assert preview["count"] == 6
    assert preview["by_origin"] == [
        {"broker": "other", "origin_queue": "orders", "count": 3},
        {"broker": "mem", "origin_queue": "orders", "count": 2},
        {"broker": "mem", "origin_queue": "invoices", "count": 1},
    ]
    # Only the largest origins are listed; the rest are counted together.
    monkeypatch.setattr(jobs, "PREVIEW_ORIGINS", 1)
    summary = jobs.preview(actor="tests", filter={"state": "held"})
    assert (summary["count"], summary["other_origins"]) == (6, 3)
    assert [row["broker__name"] for row in summary["by_origin"]] == ["other"]
    nothing = jobs.preview(actor="tests", filter={"state": "failed"})
    assert (nothing["count"], nothing["by_origin"], nothing["other_origins"]) == (0, [], 0)
    MemoryBroker.instances.pop("other", None)


def test_a_queued_job_can_be_paused_resumed_and_cancelled(api, capture):
    ids = capture([dead_message("a")])
    job = start(api, action="mark_failed", letters=ids, reason="x")
    paused = api.post(f"/api/jobs/{job['id']}/pause/", {"reason": "wait for the fix"}, format="json")
    assert paused.status_code == 200 and paused.json()["status"] == "paused"
    assert api.post(f"/api/jobs/{job['id']}/resume/").json()["status"] == "queued"
    cancelled = api.post(f"/api/jobs/{job['id']}/cancel/", {"reason": "wrong letters"}, format="json")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert run_job(job["id"]) == "not runnable"
    assert states(ids) == ["held"]
    again = api.post(f"/api/jobs/{job['id']}/cancel/")
    assert again.status_code == 409
    assert "already ended" in again.json()["detail"]


@pytest.mark.role("admin")  # purging is the admin's
def test_jobs_are_listed_newest_first(api, capture):
    ids = capture([dead_message("a")])
    first = start(api, action="mark_failed", letters=ids, reason="one")
    second = start(api, action="purge", letters=ids, reason="two")
    listed = [job["id"] for job in api.get("/api/jobs/").json()["results"]]
    assert listed[:2] == [second["id"], first["id"]]
    assert api.get("/api/jobs/", {"page_size": 1}).json()["next"]


@pytest.mark.role("admin")  # purging is the admin's
def test_every_action_is_in_the_audit_with_actor_reason_count_and_letters(api, capture, memory_broker):
    ids = capture([dead_message("a"), dead_message("b"), dead_message("c")])
    finish(api, start(api, action="replay", letters=[ids[0]], reason="fixed"))
    finish(api, start(api, action="mark_failed", letters=[ids[1]], reason="won't fix"))
    finish(api, start(api, action="purge", filter={"state": "failed"}, reason="cleanup"))
    cancelled = start(api, action="purge", letters=[ids[2]], reason="oops")
    api.post(f"/api/jobs/{cancelled['id']}/cancel/", {"reason": "wrong one"}, format="json")

    events = api.get("/api/audit/").json()["results"]
    done = [(e["action"], e["actor"], e["reason"], e["count"], e["letter_ids"])
            for e in events if e["action"] in ("capture", "replay", "mark_failed", "purge", "job.cancel")]
    assert done == [
        ("job.cancel", "olga", "wrong one", 0, []),
        ("purge", "olga", "cleanup", 1, [ids[1]]),
        ("mark_failed", "olga", "won't fix", 1, [ids[1]]),
        ("replay", "olga", "fixed", 1, [ids[0]]),
        ("capture", "olga", "triage", 3, ids),
    ]
    assert [e["id"] for e in events] == sorted((e["id"] for e in events), reverse=True)

    about_first = api.get("/api/audit/", {"letter": ids[0]}).json()["results"]
    assert [e["action"] for e in about_first] == ["replay", "job.requested", "capture"]
    purges = api.get("/api/audit/", {"action": "purge", "actor": "olga"}).json()["results"]
    assert [e["action"] for e in purges] == ["purge"]
    of_job = api.get("/api/audit/", {"job": cancelled["id"]}).json()["results"]
    assert [e["action"] for e in of_job] == ["job.cancel", "job.requested"]
    assert api.get("/api/audit/", {"actor": "mallory"}).json()["results"] == []

    assert api.get("/api/audit/verify/").json() == {
        "ok": True, "checked": len(api.get("/api/audit/", {"page_size": 500}).json()["results"]),
        "broken_at": None, "problem": "",
    }


def test_the_audit_pages_newest_first_without_gaps(api, capture):
    capture([dead_message(f"m{i}") for i in range(4)])
    for i in range(6):
        api.post("/api/jobs/preview/", {"filter": {}}, format="json")  # reads: no audit rows
        start(api, action="mark_failed", filter={"state": "held"}, reason=f"r{i}")
    every = [e["id"] for e in api.get("/api/audit/", {"page_size": 500}).json()["results"]]
    seen, url = [], "/api/audit/?page_size=3"
    while url:
        page = api.get(url).json()
        seen += [e["id"] for e in page["results"]]
        url = page["next"]
    assert seen == every and len(every) > 6
