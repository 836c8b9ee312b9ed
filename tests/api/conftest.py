"""Fixtures for the REST API tests: a signed-in client, and letters captured through the API
from the in-memory broker (the job runner stands in for the Celery worker)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from rest_framework.test import APIClient

from console.brokers.memory.adapter import Message
from console.jobs.door.runner import run_job
from console.models import DeadLetter


@pytest.fixture
def api(operator) -> APIClient:
    client = APIClient()
    client.force_authenticate(operator)
    return client


@pytest.fixture
def capture(api, memory_broker) -> Callable[..., list[int]]:
    """Put messages in ``<origin>.dlq``, then discover and capture that place through the API.

    Returns the ids of the letters the capture stored, in order.
    """
    fake, broker = memory_broker

    def run(messages: list[Message], origin: str = "orders") -> list[int]:
        fake.queue(origin)
        fake.queue(f"{origin}.dlq").extend(messages)
        found = api.post(f"/api/brokers/{broker.pk}/discover/")
        assert found.status_code == 200, found.content
        (place,) = [p for p in found.json() if p["name"] == f"{origin}.dlq"]
        job = api.post(f"/api/places/{place['id']}/capture/", {"reason": "triage"}, format="json")
        assert job.status_code == 202, job.content
        assert run_job(job.json()["id"]) == "succeeded"
        return list(DeadLetter.objects.filter(capture_job_id=job.json()["id"]).order_by("id")
                    .values_list("id", flat=True))

    return run
