"""Through the API and a real Celery worker (``celery -A console worker``): an admin adds a
webhook channel and a subscription, and presses "send a test"; the receiver on loopback fails
twice, and the worker tries again with a growing pause until the third attempt gets through.
The delivery log shows all three attempts. The secret is never shown back."""

from __future__ import annotations

import time

import pytest
from rest_framework.test import APIClient

from tests.notifications.receivers import HttpReceiver
from tests.workers import Worker

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.role("admin")]


def test_a_receiver_that_fails_twice_gets_the_third_attempt(admin, operator, filesystem_transport, tmp_path,
                                                             settings):
    settings.DLO_NOTIFY_TARGETS = [r"http://127\.0\.0\.1:\d+/.*", r".*@example\.com"]
    receiver = HttpReceiver(fail_first=2)
    worker = Worker(filesystem_transport, tmp_path / "worker.log", DLO_NOTIFY_RETRY_SECONDS="1")
    api = APIClient()
    api.force_authenticate(admin)
    try:
        made = api.post("/api/notifications/channels/", {"name": "ops", "kind": "webhook", "target": receiver.url,
                                                         "secret": "hush"}, format="json")
        assert made.status_code == 201, made.content
        channel = made.json()
        assert channel["has_secret"] is True and "hush" not in made.content.decode()
        elsewhere = api.post("/api/notifications/channels/", {"name": "leak", "kind": "webhook",
                                                              "target": "https://attacker.example/"}, format="json")
        assert elsewhere.status_code == 400 and "DLO_NOTIFY_TARGETS" in elsewhere.json()["detail"]
        subscribed = api.post("/api/notifications/subscriptions/", {
            "channel": channel["id"], "events": ["group.new", "job.finished"], "user": operator.username},
            format="json")
        assert subscribed.status_code == 201, subscribed.content
        assert api.post("/api/notifications/subscriptions/", {"channel": channel["id"], "events": ["no.such"]},
                        format="json").status_code == 400

        worker.start()
        sent = api.post(f"/api/notifications/channels/{channel['id']}/test/")
        assert sent.status_code == 202
        deadline = time.monotonic() + 60
        while True:
            (logged,) = [d for d in api.get("/api/notifications/deliveries/").json()
                         if d["id"] == sent.json()["id"]]
            if logged["status"] != "pending":
                break
            assert time.monotonic() < deadline, f"not delivered: {logged}\n{worker.log()}"
            time.sleep(0.2)
    finally:
        worker.kill()
        receiver.close()
    assert logged["status"] == "sent", logged
    assert [attempt["outcome"] for attempt in logged["attempts"]] == ["failed", "failed", "sent"]
    assert "500" in logged["attempts"][0]["error"]
    assert len(receiver.requests) == 3 and receiver.json()[-1]["event"] == "test"
