"""An operator limited to one dead place may move its letters only into that place or the
origins of its letters, never into any other queue of the broker (finding 9), through the API
and the pages; someone limited to the whole broker, or unlimited, may."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from console.models import Job, RoleScope
from tests.web.factory import memory_place, store_letter

pytestmark = pytest.mark.django_db


@pytest.fixture
def limited(people, memory_broker):
    """otto, an operator limited to orders.dlq, which holds two letters from the queue orders;
    billing.dlq and the queue payments are on the same broker."""
    fake, broker = memory_broker
    orders = memory_place(memory_broker)
    memory_place(memory_broker, origin="billing")
    fake.queue("payments")
    letters = [store_letter(orders, b"{}") for _ in range(2)]
    RoleScope.objects.create(user=people["operator"], place=orders)
    return people["operator"], orders, letters


def _move(user, letters, target: str):
    client = APIClient()
    client.force_authenticate(user)
    return client.post("/api/jobs/", {"action": "move", "letters": [letter.pk for letter in letters],
                                      "target": target, "reason": "park them"}, format="json")


def test_a_move_into_another_queue_of_the_broker_is_refused(limited):
    otto, _, letters = limited
    for target in ("payments", "billing.dlq", "billing"):
        answer = _move(otto, letters, target)
        assert answer.status_code == 400, (target, answer.content)
        assert "outside what you may act on" in answer.json()["detail"]
    assert not Job.objects.exists()


def test_a_move_into_the_letters_origin_or_the_place_itself_is_allowed(limited):
    otto, _, letters = limited
    assert _move(otto, letters[:1], "orders").status_code == 202
    assert _move(otto, letters[1:], "orders.dlq").status_code == 202


def test_limited_to_the_broker_or_unlimited_any_queue_is_allowed(limited, people, memory_broker):
    otto, _, letters = limited
    RoleScope.objects.filter(user=otto).update(place=None, broker=memory_broker[1])
    assert _move(otto, letters[:1], "payments").status_code == 202
    assert _move(people["admin"], letters[1:], "payments").status_code == 202


def test_the_confirm_page_refuses_the_move_too(limited, client):
    otto, orders, letters = limited
    client.force_login(otto)
    preview = client.post(reverse("action-preview", args=[orders.pk]),
                          {"action": "move", "target": "payments", "select_all": "1"})
    assert preview.status_code == 200, preview.status_code
    token = re.search(r'name="token" value="([^"]+)"', preview.content.decode()).group(1)
    confirm = client.post(reverse("action-confirm"), {"token": token, "reason": "park them"})
    assert confirm.status_code == 200
    assert "outside what you may act on" in confirm.content.decode()
    assert not Job.objects.exists()
