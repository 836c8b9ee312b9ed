"""Issue 46: no action that cannot work, and a preview that warns. A replay's preview says when
its letters go to several brokers, and which of them did not answer when last checked. On a
place whose broker does not answer, replay and move are not offered and the page says why;
marking failed still is (it needs no broker)."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from console.brokers.memory.adapter import MemoryBroker
from console.models import Broker
from console.services.brokers import do_add_broker, mark_unreachable
from tests.web.factory import memory_place, store_letter

pytestmark = [pytest.mark.django_db, pytest.mark.role("admin")]


@pytest.fixture
def two_brokers(memory_broker):
    MemoryBroker.instances.pop("second", None)
    fake = MemoryBroker.named("second")
    second = do_add_broker(actor="tests", name="mem-eu", kind="memory", url="memory://second")
    first_place, second_place = memory_place(memory_broker), memory_place((fake, second))
    letters = [store_letter(where, exception_type="Declined") for where in (first_place, second_place)]
    yield memory_broker[1], second, first_place, second_place, letters
    MemoryBroker.instances.pop("second", None)


def _preview(client, action: str = "replay") -> str:
    answer = client.post(reverse("letters-preview"), {"action": action, "select_all": "1",
                                                      "filter-exception": "declined"})
    assert answer.status_code == 200, answer
    return answer.content.decode()


def test_a_replay_to_several_brokers_is_warned_of(signed_in, two_brokers):
    said = _preview(signed_in)
    assert re.search(r'id="several-brokers">These letters go to 2 brokers:\s*<strong>mem</strong>, '
                     r'<strong>mem-eu</strong>', said), said
    assert 'id="brokers-down"' not in said
    assert 'id="several-brokers"' not in _preview(signed_in, "mark_failed")  # publishes nothing


def test_a_broker_that_does_not_answer_is_named_in_the_preview(signed_in, two_brokers):
    mark_unreachable(Broker.objects.get(name="mem-eu"), "connection refused")
    said = _preview(signed_in)
    assert re.search(r'id="brokers-down"><strong>mem-eu</strong>\s*did not answer when last checked', said), said


def test_replay_and_move_are_not_offered_where_the_broker_does_not_answer(signed_in, two_brokers):
    _, second, _, second_place, letters = two_brokers
    mark_unreachable(second, "connection refused")
    html = signed_in.get(reverse("place", args=[second_place.pk])).content.decode()
    offered = re.findall(r'<option value="(\w+)"', html.split('name="action"', 1)[1].split("</select>", 1)[0])
    assert "replay" not in offered and "move" not in offered and "mark_failed" in offered
    assert "Replay and move are not offered: mem-eu does not answer (connection refused)" in html
    letter = signed_in.get(reverse("letter", args=[letters[1].pk])).content.decode()
    assert "Replay and move are not offered: mem-eu does not answer" in letter

    refused = signed_in.post(reverse("action-preview", args=[second_place.pk]),
                             {"action": "replay", "ids": [letters[1].pk]})
    assert refused.status_code == 302  # back to the place, saying the action is not one offered
